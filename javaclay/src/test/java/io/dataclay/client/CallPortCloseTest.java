package io.dataclay.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.proto.CallFrame;
import io.dataclay.proto.CallReply;
import io.dataclay.proto.ErrorCode;
import io.dataclay.proto.ErrorInfo;
import io.dataclay.proto.GetFieldRequest;
import io.dataclay.proto.SetFieldRequest;
import io.dataclay.rpc.TlsFixtures;
import io.dataclay.rpc.TlsSettings;
import io.grpc.netty.shaded.io.netty.handler.ssl.JdkSslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslProvider;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Timeout;

/** Closing a call port, and what a connection makes of a server that ends it, against a server speaking the frames. */
@Timeout(30)
class CallPortCloseTest {
  /**
   * Answers OpenCalls, holds a GetField until {@code release}, and ends a connection whose frame is
   * over 1 MiB; or, when it {@code stalls}, stops reading such a frame, as a host cut off does.
   */
  private static final class FrameServer implements AutoCloseable {
    static final int LIMIT = 1 << 20;
    final ServerSocket listening;
    final CountDownLatch received = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final boolean stalls;

    FrameServer() throws IOException {
      this(false, null);
    }

    // over TLS when {@code tls} is not null; a small receive buffer, whatever the host's defaults, so
    // that a frame the server stops reading fills it soon
    private static ServerSocket listening(SSLContext tls) throws IOException {
      ServerSocket s = tls == null ? new ServerSocket() : tls.getServerSocketFactory().createServerSocket();
      s.setReceiveBufferSize(1 << 16);
      s.bind(new InetSocketAddress("127.0.0.1", 0));
      return s;
    }

    FrameServer(boolean stalls, SSLContext tls) throws IOException {
      this.stalls = stalls;
      this.listening = listening(tls);
      Thread t = new Thread(() -> {
        while (!listening.isClosed()) {
          try {
            Socket s = listening.accept();
            Thread serve = new Thread(() -> serve(s));
            serve.setDaemon(true);
            serve.start();
          } catch (IOException closed) {
            return;
          }
        }
      });
      t.setDaemon(true);
      t.start();
    }

    private void serve(Socket s) {
      try (s) {
        DataInputStream in = new DataInputStream(s.getInputStream());
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        while (true) {
          int size = in.readInt();
          if (size > LIMIT && stalls) {
            release.await();
            return;
          }
          if (size > LIMIT) {
            // as the Data Service ends a connection that sends a frame over its limit: from the
            // length alone, an error with ID 0, then the close, the rest unread
            write(out, CallReply.newBuilder().setError(ErrorInfo.newBuilder().setCode(ErrorCode.INVALID_ARGUMENT)
                .setMessage("a frame of " + size + " bytes is larger than the " + LIMIT + " this backend accepts"))
                .build());
            return;
          }
          byte[] body = new byte[size];
          in.readFully(body);
          CallFrame frame = CallFrame.parseFrom(body);
          CallReply.Builder reply = CallReply.newBuilder().setId(frame.getId());
          if (frame.hasGetField()) {
            received.countDown();
            release.await();
            reply.setValue(ByteString.copyFromUtf8("answered"));
          } else {
            reply.setValue(ByteString.EMPTY);
          }
          write(out, reply.build());
        }
      } catch (IOException | InterruptedException ended) {
        // the client went away
      }
    }

    private static void write(DataOutputStream out, CallReply reply) throws IOException {
      byte[] b = reply.toByteArray();
      out.writeInt(b.length);
      out.write(b);
      out.flush();
    }

    @Override
    public void close() throws IOException {
      release.countDown();
      listening.close();
    }
  }

  @Test
  void aCallInFlightOnAnotherThreadIsAnsweredWhenThePortIsClosed() throws Exception {
    try (FrameServer server = new FrameServer();
        CallPort port = new CallPort("127.0.0.1", server.listening.getLocalPort(), TlsSettings.plaintext(), 0)) {
      CompletableFuture<byte[]> inFlight = CompletableFuture.supplyAsync(() -> {
        try {
          return port.call("token", CallFrame.newBuilder().setGetField(GetFieldRequest.newBuilder().setField("x")));
        } catch (CallPort.Unusable e) {
          throw new AssertionError(e);
        }
      });
      assertTrue(server.received.await(10, TimeUnit.SECONDS));
      // run: closed (as a client reconnecting closes its old one) while the call waits
      port.close();
      server.release.countDown();
      // verify: the call got its answer; its connection closed after it; later calls go elsewhere
      assertArrayEquals("answered".getBytes(), inFlight.get(10, TimeUnit.SECONDS));
      assertEquals(0, port.connections());
      assertThrows(CallPort.Unusable.class, () -> port.call("token", CallFrame.newBuilder()));
    }
  }

  @Test
  void aFrameTheServerRefusesWhileItIsWrittenFailsWithTheServersErrorNotAsUnavailable() throws Exception {
    try (FrameServer server = new FrameServer();
        CallPort port = new CallPort("127.0.0.1", server.listening.getLocalPort(), TlsSettings.plaintext(), 0)) {
      // 32 MiB: more than the socket buffers take while the server has stopped reading
      SetFieldRequest big = SetFieldRequest.newBuilder().setField("x")
          .setValue(ByteString.copyFrom(new byte[32 << 20])).build();
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
          () -> port.call("token", CallFrame.newBuilder().setSetField(big)));
      assertTrue(e.getMessage().contains("larger than"), e.getMessage());
    }
  }

  @Test
  void aSendTheServerStopsTakingIsGivenUpAfterTheSilenceBound() throws Exception {
    try (FrameServer server = new FrameServer(true, null)) {
      assertSendGivenUp(server, TlsSettings.plaintext());
    }
  }

  @Test
  void aSendOverTlsTheServerStopsTakingIsGivenUpAfterTheSilenceBound() throws Exception {
    // the watch closes the TCP socket under the TLS one, which ends the write without its lock
    SslContext server = SslContextBuilder.forServer(TlsFixtures.file("server.pem").toFile(),
        TlsFixtures.file("server.key").toFile()).sslProvider(SslProvider.JDK).build();
    try (FrameServer stalling = new FrameServer(true, ((JdkSslContext) server).context())) {
      assertSendGivenUp(stalling, TlsFixtures.client("ca.pem"));
    }
  }

  // A 32 MiB frame to a server that stops reading it, from a port that gives up after 0.9 s of silence.
  private static void assertSendGivenUp(FrameServer server, TlsSettings tls) throws Exception {
    try (CallPort port = new CallPort("127.0.0.1", server.listening.getLocalPort(), tls, 900)) {
      SetFieldRequest big = SetFieldRequest.newBuilder().setField("x")
          .setValue(ByteString.copyFrom(new byte[32 << 20])).build();
      // run
      long began = System.nanoTime();
      CompletableFuture<Throwable> sent = CompletableFuture.supplyAsync(() -> {
        try {
          port.call("token", CallFrame.newBuilder().setSetField(big));
          return null;
        } catch (Throwable e) {
          return e;
        }
      });
      // verify: unavailable, saying it went silent, about the bound after the send stopped (not TCP's minutes)
      Throwable e = sent.get(10, TimeUnit.SECONDS);
      double seconds = (System.nanoTime() - began) / 1e9;
      assertTrue(e instanceof BackendUnavailableException, String.valueOf(e));
      assertTrue(e.getMessage().contains("took nothing of the call for 0.9 s"), e.getMessage());
      assertTrue(seconds >= 0.9 && seconds < 5, seconds + " s");
      assertEquals(0, port.connections());
    }
  }
}
