package io.dataclay.ds;

import com.google.protobuf.MessageLite;
import io.dataclay.proto.DataServiceMessage;
import io.dataclay.proto.EnvironmentHello;
import io.dataclay.proto.EnvironmentMessage;
import io.dataclay.proto.EvictRequest;
import io.dataclay.proto.ExecuteRequest;
import io.dataclay.proto.ExecuteResult;
import io.dataclay.proto.LoadReply;
import io.dataclay.proto.LoadRequest;
import io.dataclay.proto.ModelList;
import io.dataclay.proto.RelayReply;
import io.dataclay.proto.RelayRequest;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * A test playing one execution-environment process: the other end of its standard input and
 * output, reached through the bridge {@link EnvironmentPeers#python()} runs. It frames messages
 * itself (4-byte big-endian length + message, written independently of the Data Service's code so
 * the wire format is checked), says hello, and lets a test read what the Data Service sends, answer
 * calls, and ask for loads and relays as an environment does.
 */
public final class EnvironmentPeer implements AutoCloseable {
  private final SocketChannel socket;
  private final long pid;
  private final List<String> arguments;
  private final Map<String, String> environment;
  private final BlockingQueue<DataServiceMessage> received = new LinkedBlockingQueue<>();
  private final Map<Long, CompletableFuture<DataServiceMessage>> answers = new ConcurrentHashMap<>();
  private final AtomicLong requestIds = new AtomicLong(1000);
  private final CompletableFuture<String> ended = new CompletableFuture<>();
  private final Thread reader;
  private volatile Function<ExecuteRequest, ExecuteResult> responder;

  /** The process behind {@code socket}: reads the process ID its bridge sends first, and what it recorded in {@code records}. */
  EnvironmentPeer(SocketChannel socket, Path records) throws IOException {
    this.socket = socket;
    this.pid = Long.parseLong(readLine());
    this.arguments = Files.readAllLines(records.resolve(pid + ".args"));
    this.environment = new HashMap<>();
    for (String line : Files.readAllLines(records.resolve(pid + ".env"))) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        environment.put(line.substring(0, eq), line.substring(eq + 1));
      }
    }
    reader = new Thread(this::readFrames, "test-environment-peer-" + pid);
    reader.setDaemon(true);
    reader.start();
  }

  /** The process's ID, as this host sees it. */
  public long pid() {
    return pid;
  }

  /** The command line the process was started with (after the interpreter). */
  public List<String> arguments() {
    return arguments;
  }

  /** The environment the process was started with. */
  public Map<String, String> environment() {
    return environment;
  }

  /**
   * Says hello (this process's ID, confinement "test-peer") and returns the models the Data Service
   * deploys in answer, which is always its first frame to a new process.
   */
  public ModelList hello() throws IOException, InterruptedException {
    hello(EnvironmentHello.newBuilder().setPid((int) pid).setRuntimeVersion("test").setConfinement("test-peer")
        .build());
    DataServiceMessage first = next();
    if (!first.hasDeploy()) {
      throw new AssertionError("the first frame after hello must deploy the models, not " + first);
    }
    return first.getDeploy();
  }

  /** Sends any hello, without waiting. */
  public void hello(EnvironmentHello hello) throws IOException {
    send(EnvironmentMessage.newBuilder().setHello(hello).build());
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

  /** Answers {@code request} with {@code value} as its result (UTF-8) and no change. */
  public void answer(ExecuteRequest request, String value) throws IOException {
    answer(ExecuteResult.newBuilder().setCallId(request.getCallId()).setResult(TestObjects.bytes(value)).build());
  }

  /** Answers every ExecuteRequest from now on with {@code function}, on the reader thread. */
  public void serve(Function<ExecuteRequest, ExecuteResult> function) {
    responder = function;
    DataServiceMessage m;
    while ((m = received.peek()) != null && m.hasExecute()) {
      received.remove(m);
      respond(m.getExecute());
    }
  }

  /** Asks for the stored state of {@code ids} for call {@code callId}, and returns the Data Service's answer. */
  public LoadReply load(long callId, String... ids) throws Exception {
    long id = requestIds.incrementAndGet();
    return ask(id, EnvironmentMessage.newBuilder().setLoad(LoadRequest.newBuilder().setRequestId(id)
        .setCallId(callId).addAllIds(List.of(ids))).build()).getLoaded();
  }

  /** Asks the Data Service to relay {@code request} to {@code method} of {@code target} for call {@code callId}. */
  public RelayReply relay(long callId, String target, String method, MessageLite request) throws Exception {
    long id = requestIds.incrementAndGet();
    return ask(id, EnvironmentMessage.newBuilder().setRelay(RelayRequest.newBuilder().setRequestId(id)
        .setCallId(callId).setTarget(target).setMethod(method).setRequest(request.toByteString())).build())
        .getRelayed();
  }

  /** The next message from the Data Service (answers to this peer's loads and relays aside), within 10 s. */
  public DataServiceMessage next() throws InterruptedException {
    return Arrivals.next(received, "the Data Service sent nothing");
  }

  /** The next message within {@code ms}, or null. */
  public DataServiceMessage poll(long ms) throws InterruptedException {
    return received.poll(ms, TimeUnit.MILLISECONDS);
  }

  /** The next ExecuteRequest (fails if another kind of message comes first). */
  public ExecuteRequest nextExecute() throws InterruptedException {
    DataServiceMessage m = next();
    if (!m.hasExecute()) {
      throw new AssertionError("expected an execute request, got " + m);
    }
    return m.getExecute();
  }

  /** The next EvictRequest (fails if another kind of message comes first). */
  public EvictRequest nextEvict() throws InterruptedException {
    DataServiceMessage m = next();
    if (!m.hasEvict()) {
      throw new AssertionError("expected an eviction, got " + m);
    }
    return m.getEvict();
  }

  /** How the Data Service's side ended ("closed" at a clean end of stream), waiting up to 10 s. */
  public String ended() throws Exception {
    return ended.get(10, TimeUnit.SECONDS);
  }

  /** Whether the connection has ended. */
  public boolean isEnded() {
    return ended.isDone();
  }

  /** Whether the process is still running. */
  public boolean alive() {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }

  /** Half-closes the connection (shutdown of the write side): the process's standard output ends. */
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

  private DataServiceMessage ask(long requestId, EnvironmentMessage request) throws Exception {
    CompletableFuture<DataServiceMessage> answer = new CompletableFuture<>();
    answers.put(requestId, answer);
    send(request);
    return answer.get(10, TimeUnit.SECONDS);
  }

  private void respond(ExecuteRequest request) {
    try {
      answer(responder.apply(request));
    } catch (IOException e) {
      ended.complete("broken while answering: " + e);
    }
  }

  // The bridge's first line: its process ID, before any frame.
  private String readLine() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    ByteBuffer one = ByteBuffer.allocate(1);
    while (true) {
      one.clear();
      if (socket.read(one) < 0) {
        throw new EOFException("the process went away before it said its process ID");
      }
      if (one.get(0) == '\n') {
        return line.toString(StandardCharsets.US_ASCII);
      }
      line.write(one.get(0));
    }
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
        CompletableFuture<DataServiceMessage> waiting = switch (m.getKindCase()) {
          case LOADED -> answers.remove(m.getLoaded().getRequestId());
          case RELAYED -> answers.remove(m.getRelayed().getRequestId());
          default -> null;
        };
        if (waiting != null) {
          waiting.complete(m);
        } else if (responder != null && m.hasExecute()) {
          respond(m.getExecute());
        } else {
          received.add(m);
        }
      }
    } catch (IOException e) {
      ended.complete("broken: " + e);
    } finally {
      answers.values().forEach(f -> f.completeExceptionally(new EOFException("the link ended")));
    }
  }

  private boolean readFully(ByteBuffer b, boolean atFrameStart) throws IOException {
    while (b.hasRemaining()) {
      if (socket.read(b) < 0) {
        if (atFrameStart && b.position() == 0) {
          return false;
        }
        throw new EOFException("the Data Service closed the link inside a frame");
      }
    }
    return true;
  }
}
