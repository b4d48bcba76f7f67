package io.dataclay.ds.ee;

import io.dataclay.ds.service.DeltaSequences;
import io.dataclay.ds.service.ExecutionKind;
import io.dataclay.ds.service.ExecutionRequest;
import io.dataclay.ds.service.ExecutionResult;
import io.dataclay.ds.service.ResultApplier;
import io.dataclay.ds.service.SequencedDelta;
import io.dataclay.ds.servicer.Messages;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.proto.DataServiceMessage;
import io.dataclay.proto.EnvironmentMessage;
import io.dataclay.proto.ExecuteRequest;
import io.dataclay.proto.ExecuteResult;
import io.dataclay.rpc.GrpcErrors;
import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One attached stream to an execution environment: sends ExecuteRequests tagged with call IDs
 * (writes serialised), completes each call from its ExecuteResult after the {@link ResultApplier}
 * stored its changes, and fails every call in flight with BACKEND_UNAVAILABLE when the stream
 * breaks. Results are handled in arrival order on the stream's (serialised) callback thread.
 */
final class EnvironmentLink implements StreamObserver<EnvironmentMessage> {
  private static final Logger LOG = Logger.getLogger(EnvironmentLink.class.getName());

  private record Pending(ExecutionRequest request, CompletableFuture<byte[]> future) {}

  private final PythonEnvironment owner;
  private final EnvironmentSupervisor.Spawn spawn;
  private final ServerCallStreamObserver<DataServiceMessage> out;
  private final ResultApplier applier;
  private final DeltaSequences sequences = new DeltaSequences();
  private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
  private final AtomicLong callIds = new AtomicLong();
  private boolean helloSeen;
  private boolean closed;

  EnvironmentLink(PythonEnvironment owner, EnvironmentSupervisor.Spawn spawn,
      ServerCallStreamObserver<DataServiceMessage> out, ResultApplier applier) {
    this.owner = owner;
    this.spawn = spawn;
    this.out = out;
    this.applier = applier;
    out.setOnCancelHandler(() -> close("the execution environment's stream was cancelled"));
  }

  /** The process this stream belongs to. */
  EnvironmentSupervisor.Spawn spawn() {
    return spawn;
  }

  /** Sends a request; false (and nothing sent) when the stream is already closed. */
  boolean submit(ExecutionRequest request, CompletableFuture<byte[]> future) {
    long callId = callIds.incrementAndGet();
    pending.put(callId, new Pending(request, future));
    DataServiceMessage message = DataServiceMessage.newBuilder().setExecute(ExecuteRequest.newBuilder()
        .setCallId(callId)
        .setSession(Messages.sessionInfo(request.session()))
        .setObjectId(request.objectId().toString())
        .setClassName(request.className())
        .setKind(kind(request.kind()))
        .setName(request.name())
        .setPayload(ByteString.copyFrom(request.payload()))).build();
    if (!write(message)) {
      pending.remove(callId);
      return false;
    }
    return true;
  }

  /** Sends a deploy or evict message; dropped when the stream is closed (a new process reads state afresh). */
  void send(DataServiceMessage message) {
    write(message);
  }

  @Override
  public void onNext(EnvironmentMessage message) {
    if (!helloSeen) {
      if (!message.hasHello()) {
        violation("the first message on the stream must be hello, not " + message.getKindCase());
        return;
      }
      if (message.getHello().getPid() <= 0) {
        violation("hello.pid must be the environment's process ID, not " + message.getHello().getPid());
        return;
      }
      helloSeen = true;
      owner.ready(this);
      return;
    }
    if (!message.hasResult()) {
      violation("expected a result, got " + message.getKindCase());
      return;
    }
    onResult(message.getResult());
  }

  @Override
  public void onError(Throwable t) {
    close("the execution environment's stream broke: " + Status.fromThrowable(t));
  }

  @Override
  public void onCompleted() {
    close("the execution environment closed its stream", null, true);
  }

  /** Ends the stream and fails every call in flight with BACKEND_UNAVAILABLE; idempotent. */
  void close(String reason) {
    close(reason, null, false);
  }

  private void close(String reason, DataClayException toEnvironment, boolean byEnvironment) {
    synchronized (out) {
      if (closed) {
        return;
      }
      closed = true;
      try {
        if (toEnvironment == null) {
          out.onCompleted();
        } else {
          out.onError(GrpcErrors.toStatus(toEnvironment));
        }
      } catch (RuntimeException alreadyGone) {
        // The call was cancelled or failed already: nothing to end.
      }
    }
    List<Pending> failed = new ArrayList<>(pending.values());
    pending.clear();
    for (Pending p : failed) {
      p.future().completeExceptionally(new BackendUnavailableException(reason + "; the call may not have run"));
    }
    owner.broken(this, byEnvironment);
  }

  private void onResult(ExecuteResult result) {
    Pending p = pending.remove(result.getCallId());
    if (p == null) {
      LOG.warning("the execution environment answered call " + result.getCallId() + ", which is not in flight");
      return;
    }
    ExecutionResult converted;
    try {
      converted = convert(result);
    } catch (InvalidArgumentException bad) {
      owner.evict(List.of(p.request().objectId()));
      p.future().completeExceptionally(
          new InternalException("the execution environment sent an invalid result: " + bad.getMessage()));
      return;
    }
    applier.apply(owner, p.request(), converted, sequences).whenComplete((value, error) -> {
      if (error != null) {
        p.future().completeExceptionally(error);
      } else {
        p.future().complete(value);
      }
    });
  }

  private static ExecutionResult convert(ExecuteResult r) {
    List<StoredObject> created = Messages.storedObjects(r.getNewObjectsList(), "result.new_objects");
    List<SequencedDelta> deltas = new ArrayList<>(r.getDeltasCount());
    for (int i = 0; i < r.getDeltasCount(); i++) {
      deltas.add(Messages.delta(r.getDeltas(i), "result.deltas[" + i + "]"));
    }
    DataClayException error = r.hasError() && r.getError().getCodeValue() != 0 ? GrpcErrors.fromInfo(r.getError()) : null;
    return new ExecutionResult(error == null ? r.getResult().toByteArray() : new byte[0], error, created, deltas);
  }

  private boolean write(DataServiceMessage message) {
    synchronized (out) {
      if (closed) {
        return false;
      }
      try {
        out.onNext(message);
        return true;
      } catch (RuntimeException e) {
        LOG.log(Level.FINE, "writing to the execution environment failed", e);
      }
    }
    close("writing to the execution environment failed");
    return false;
  }

  private void violation(String what) {
    LOG.warning("execution environment (pid " + spawn.pid() + ") broke the protocol: " + what);
    close("the execution environment broke the protocol: " + what, new InvalidArgumentException(what), false);
  }

  private static io.dataclay.proto.ExecutionKind kind(ExecutionKind kind) {
    switch (kind) {
      case CALL_METHOD: return io.dataclay.proto.ExecutionKind.CALL_METHOD;
      case GET_FIELD: return io.dataclay.proto.ExecutionKind.GET_FIELD;
      default: return io.dataclay.proto.ExecutionKind.SET_FIELD;
    }
  }
}
