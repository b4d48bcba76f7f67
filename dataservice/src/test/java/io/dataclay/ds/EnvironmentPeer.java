package io.dataclay.ds;

import io.dataclay.proto.DataServiceMessage;
import io.dataclay.proto.EnvironmentHello;
import io.dataclay.proto.EnvironmentMessage;
import io.dataclay.proto.ExecuteRequest;
import io.dataclay.proto.ExecuteResult;
import java.io.EOFException;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A Java stand-in for the execution environment's side of the link: connects to the Data
 * Service's Unix socket, frames messages itself (4-byte big-endian length + message, written
 * independently of the Data Service's code so the wire format is checked), says hello with a
 * secret, and lets a test read the Data Service's messages and answer them (or answers every
 * request itself with a responder, on its reader thread).
 */
public final class EnvironmentPeer implements AutoCloseable {
  private final SocketChannel socket;
  private final BlockingQueue<DataServiceMessage> received = new LinkedBlockingQueue<>();
  private final CompletableFuture<String> ended = new CompletableFuture<>();
  private final Function<ExecuteRequest, ExecuteResult> responder;
  private final Thread reader;

  private EnvironmentPeer(Path socketPath, Function<ExecuteRequest, ExecuteResult> responder) throws IOException {
    this.responder = responder;
    socket = SocketChannel.open(StandardProtocolFamily.UNIX);
    socket.connect(UnixDomainSocketAddress.of(socketPath));
    reader = new Thread(this::readFrames, "test-environment-peer-reader");
    reader.setDaemon(true);
    reader.start();
  }

  /** Connects without saying hello. */
  public static EnvironmentPeer connect(Path socket) throws IOException {
    return new EnvironmentPeer(socket, null);
  }

  /** Connects and says hello with {@code secret}; messages are queued for the test. */
  public static EnvironmentPeer attach(Path socket, String secret) throws IOException {
    EnvironmentPeer peer = connect(socket);
    peer.hello(secret);
    return peer;
  }

  /** Connects, says hello and answers every ExecuteRequest with {@code responder}. */
  public static EnvironmentPeer serving(Path socket, String secret, Function<ExecuteRequest, ExecuteResult> responder)
      throws IOException {
    EnvironmentPeer peer = new EnvironmentPeer(socket, responder);
    peer.hello(secret);
    return peer;
  }

  /** Sends the hello that must open the connection, with this JVM's process ID. */
  public void hello(String secret) throws IOException {
    hello(secret, (int) ProcessHandle.current().pid());
  }

  /** Sends a hello with any secret and process ID. */
  public void hello(String secret, int pid) throws IOException {
    send(EnvironmentMessage.newBuilder()
        .setHello(EnvironmentHello.newBuilder().setPid(pid).setRuntimeVersion("test").setSecret(secret))
        .build());
  }

  /** Sends any message as one frame. */
  public void send(EnvironmentMessage message) throws IOException {
    byte[] body = message.toByteArray();
    sendRaw(ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).array());
  }

  /** Sends bytes as they are (for malformed frames). */
  public synchronized void sendRaw(byte[] bytes) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(bytes);
    while (b.hasRemaining()) {
      socket.write(b);
    }
  }

  /** Sends a result. */
  public void answer(ExecuteResult result) throws IOException {
    send(EnvironmentMessage.newBuilder().setResult(result).build());
  }

  /** The next message from the Data Service, within 10 s. */
  public DataServiceMessage next() throws InterruptedException {
    DataServiceMessage m = received.poll(10, TimeUnit.SECONDS);
    if (m == null) {
      throw new AssertionError("the Data Service sent nothing within 10 s");
    }
    return m;
  }

  /** The next ExecuteRequest (skipping nothing: fails if another kind of message comes first). */
  public ExecuteRequest nextExecute() throws InterruptedException {
    DataServiceMessage m = next();
    if (!m.hasExecute()) {
      throw new AssertionError("expected an execute request, got " + m);
    }
    return m.getExecute();
  }

  /** How the Data Service's side ended ("closed" at a clean end of stream), waiting up to 10 s. */
  public String ended() throws Exception {
    return ended.get(10, TimeUnit.SECONDS);
  }

  /** Half-closes the connection (shutdown of the write side), as an environment leaving on its own does. */
  public void finish() throws IOException {
    socket.shutdownOutput();
  }

  /** Breaks the connection from the environment's side (as a crashing process would). */
  public void breakConnection() throws IOException {
    socket.close();
  }

  @Override
  public void close() throws Exception {
    socket.close();
    reader.join(5000);
  }

  // Channels.newInputStream/newOutputStream would serialise reads and writes on one lock, so the
  // peer reads and writes the SocketChannel directly.
  private void readFrames() {
    try {
      ByteBuffer header = ByteBuffer.allocate(4);
      while (true) {
        header.clear();
        if (!readFully(header, true)) {
          ended.complete("closed");
          return;
        }
        ByteBuffer body = ByteBuffer.allocate(header.flip().getInt());
        readFully(body, false);
        DataServiceMessage m = DataServiceMessage.parseFrom(body.array());
        if (responder != null && m.hasExecute()) {
          answer(responder.apply(m.getExecute()));
        } else {
          received.add(m);
        }
      }
    } catch (IOException e) {
      ended.complete("broken: " + e);
    }
  }

  private boolean readFully(ByteBuffer b, boolean atFrameStart) throws IOException {
    while (b.hasRemaining()) {
      if (socket.read(b) < 0) {
        if (atFrameStart && b.position() == 0) {
          return false;
        }
        throw new EOFException("the Data Service closed the connection inside a frame");
      }
    }
    return true;
  }
}
