package io.dataclay.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.proto.Empty;
import io.dataclay.proto.HealthResponse;
import io.dataclay.proto.LivenessGrpc;
import io.dataclay.proto.LogicModuleGrpc;
import io.dataclay.server.ServerTransport;
import io.dataclay.rpc.TlsSettings;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Real servers on 127.0.0.1 and clients built by {@link Channels}, with an unreachable time of
 * 300 ms: a busy server is waited for, a silent one is given up within the bound, and a connection
 * that is accepted but never set up is given up within three times it.
 */
@Timeout(60)
class LivenessWatchTest {
  private static final long UNREACHABLE_MS = 300;

  private final List<Server> servers = new ArrayList<>();
  private final List<AutoCloseable> sockets = new ArrayList<>();

  /** Answers Health after {@code delayMs}, or never when it is negative. */
  private static final class SlowHealth extends LogicModuleGrpc.LogicModuleImplBase {
    private final long delayMs;

    SlowHealth(long delayMs) {
      this.delayMs = delayMs;
    }

    @Override
    public void health(Empty request, StreamObserver<HealthResponse> out) {
      if (delayMs < 0) {
        return;
      }
      try {
        Thread.sleep(delayMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      out.onNext(HealthResponse.newBuilder().setVersion("slow").build());
      out.onCompleted();
    }
  }

  /** A Liveness service that takes pings and never answers them, as a frozen process would. */
  private static final class DeafLiveness extends LivenessGrpc.LivenessImplBase {
    @Override
    public void ping(Empty request, StreamObserver<Empty> out) {}
  }

  @BeforeEach
  void shortBound() {
    Channels.unreachableAfter(UNREACHABLE_MS);
  }

  @AfterEach
  void restore() throws Exception {
    Channels.unreachableAfter(Channels.DEFAULT_UNREACHABLE_MS);
    servers.forEach(Server::shutdownNow);
    synchronized (sockets) {
      for (AutoCloseable socket : sockets) {
        socket.close();
      }
    }
  }

  private static long millisSince(long startNanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
  }

  private static String health(int port) {
    try (LogicModuleClient client = new LogicModuleClient("127.0.0.1", port, TlsSettings.plaintext(), () -> null)) {
      return client.health(20_000);
    }
  }

  @Test
  void aServerThatIsBusyButAnswersPingsIsWaitedForPastTheBound() throws IOException {
    // setup: a server taking 5 times the bound to answer
    Server server = ServerTransport.builder("127.0.0.1", 0, TlsSettings.plaintext(), "DATACLAY_BIND_HOST")
        .addService(new SlowHealth(5 * UNREACHABLE_MS)).build().start();
    servers.add(server);
    long started = System.nanoTime();
    // run
    String answer = health(server.getPort());
    // verify
    assertEquals("slow", answer);
    assertTrue(millisSince(started) >= 5 * UNREACHABLE_MS);
  }

  @Test
  void aServerThatAnswersNeitherTheCallNorPingsIsGivenUpWithinTheBound() throws IOException {
    // setup: connected, but deaf to both (the connection itself stays up)
    Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .addService(new SlowHealth(-1)).addService(new DeafLiveness()).build().start();
    servers.add(server);
    long started = System.nanoTime();
    // run
    String message = assertThrows(BackendUnavailableException.class, () -> health(server.getPort())).getMessage();
    // verify: about the bound, far from the call's own 20 s deadline (allowing for a stalled client)
    long took = millisSince(started);
    assertTrue(message.contains("not even to a ping"), message);
    assertTrue(took >= UNREACHABLE_MS * 3 / 4 && took < 3 * UNREACHABLE_MS + 2000, "gave up after " + took + " ms");
  }

  @Test
  void aConnectionAcceptedButNeverSetUpIsGivenUpWithinThreeTimesTheBound() throws IOException {
    // setup: a socket that accepts and then says nothing (a server frozen before it answered)
    ServerSocket listener = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
    sockets.add(listener);
    Thread acceptor = new Thread(() -> {
      try {
        while (true) {
          Socket accepted = listener.accept();
          synchronized (sockets) {
            sockets.add(accepted);
          }
        }
      } catch (IOException closed) {
        // the test ended
      }
    });
    acceptor.setDaemon(true);
    acceptor.start();
    long started = System.nanoTime();
    // run
    String message = assertThrows(BackendUnavailableException.class, () -> health(listener.getLocalPort()))
        .getMessage();
    // verify: not judged by a ping on a connection that never came up; given up at three bounds
    long took = millisSince(started);
    assertTrue(message.contains("no connection"), message);
    assertTrue(took >= 3 * UNREACHABLE_MS && took < 3 * UNREACHABLE_MS + 2000, "gave up after " + took + " ms");
  }
}
