package io.dataclay.ds;

import io.dataclay.client.Channels;
import io.dataclay.proto.DataServiceMessage;
import io.dataclay.proto.EnvironmentHello;
import io.dataclay.proto.EnvironmentMessage;
import io.dataclay.proto.ExecuteRequest;
import io.dataclay.proto.ExecuteResult;
import io.dataclay.proto.ExecutionEnvironmentLinkGrpc;
import io.dataclay.rpc.SessionMetadata;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A Java stand-in for the execution environment's side of executionenv.proto, over a real
 * channel: attaches with a secret, says hello, and lets a test read the Data Service's messages
 * and answer them (or answers every request itself with a responder).
 */
public final class EnvironmentPeer implements AutoCloseable {
  private final ManagedChannel channel;
  private final BlockingQueue<DataServiceMessage> received = new LinkedBlockingQueue<>();
  private final CompletableFuture<Status> closed = new CompletableFuture<>();
  private final StreamObserver<EnvironmentMessage> toDataService;
  private final Function<ExecuteRequest, ExecuteResult> responder;
  private ClientCallStreamObserver<EnvironmentMessage> call;

  private EnvironmentPeer(int port, String secret, Function<ExecuteRequest, ExecuteResult> responder) {
    this.responder = responder;
    channel = Channels.forAddress("127.0.0.1", port);
    Metadata headers = new Metadata();
    if (secret != null) {
      headers.put(SessionMetadata.EE_SECRET_KEY, secret);
    }
    toDataService = ExecutionEnvironmentLinkGrpc.newStub(channel)
        .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
        .attach(new ClientResponseObserver<EnvironmentMessage, DataServiceMessage>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<EnvironmentMessage> requestStream) {
            call = requestStream;
          }

          @Override
          public void onNext(DataServiceMessage m) {
            if (EnvironmentPeer.this.responder != null && m.hasExecute()) {
              send(EnvironmentMessage.newBuilder().setResult(EnvironmentPeer.this.responder.apply(m.getExecute())).build());
            } else {
              received.add(m);
            }
          }

          @Override
          public void onError(Throwable t) {
            closed.complete(Status.fromThrowable(t));
          }

          @Override
          public void onCompleted() {
            closed.complete(Status.OK);
          }
        });
  }

  /** Attaches with {@code secret} (null: none) without saying hello. */
  public static EnvironmentPeer connect(int port, String secret) {
    return new EnvironmentPeer(port, secret, null);
  }

  /** Attaches and says hello; messages are queued for the test. */
  public static EnvironmentPeer attach(int port, String secret) {
    EnvironmentPeer peer = connect(port, secret);
    peer.hello();
    return peer;
  }

  /** Attaches, says hello and answers every ExecuteRequest with {@code responder}. */
  public static EnvironmentPeer serving(int port, String secret, Function<ExecuteRequest, ExecuteResult> responder) {
    EnvironmentPeer peer = new EnvironmentPeer(port, secret, responder);
    peer.hello();
    return peer;
  }

  /** Sends the hello that must open the stream. */
  public void hello() {
    send(EnvironmentMessage.newBuilder()
        .setHello(EnvironmentHello.newBuilder().setPid((int) ProcessHandle.current().pid()).setRuntimeVersion("test"))
        .build());
  }

  /** Sends any message. */
  public synchronized void send(EnvironmentMessage message) {
    toDataService.onNext(message);
  }

  /** Sends a result. */
  public void answer(ExecuteResult result) {
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

  /** The status the Data Service ended the stream with, waiting up to 10 s. */
  public Status closedStatus() throws Exception {
    return closed.get(10, TimeUnit.SECONDS);
  }

  /** Half-closes the stream, as an environment leaving on its own does. */
  public synchronized void finish() {
    toDataService.onCompleted();
  }

  /** Breaks the stream from the environment's side (as a crashing process would). */
  public void breakStream() {
    call.cancel("test breaks the stream", null);
  }

  @Override
  public void close() {
    if (!closed.isDone()) {
      call.cancel("peer closed", null);
    }
    Channels.close(channel);
  }
}
