package io.dataclay.ds.ee;

import com.google.protobuf.UnsafeByteOperations;
import io.dataclay.ds.service.DeltaSequences;
import io.dataclay.ds.service.ExecutionKind;
import io.dataclay.ds.service.ExecutionRequest;
import io.dataclay.ds.service.ExecutionResult;
import io.dataclay.ds.service.InlineCall;
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
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One connection from an execution environment. Its reader thread takes the hello (handed to the
 * owner to check), then every result in arrival order: it completes each call after the
 * {@link ResultApplier} stored its changes, so one object's deltas are applied in the order the
 * environment sent them. Requests are written by the calling thread (no hop), except where that
 * thread must not block. When the connection ends, every call in flight fails with
 * BACKEND_UNAVAILABLE.
 */
final class EnvironmentLink {
  /** The largest first frame accepted: a hello is a few dozen bytes. */
  static final long MAX_HELLO_BYTES = 64 * 1024;
  /** The largest request frame written on a thread that must not block. */
  static final int MAX_INLINE_FRAME_BYTES = 16 * 1024;
  /** Requests are written on a thread that must not block only while at most this many calls are unanswered. */
  static final int MAX_INLINE_IN_FLIGHT = 4;
  private static final Logger LOG = Logger.getLogger(EnvironmentLink.class.getName());

  private record Pending(ExecutionRequest request, CompletableFuture<byte[]> future) {}

  private final PythonEnvironment owner;
  private final FramedChannel channel;
  private final ResultApplier applier;
  private final Executor blocking;
  private final Thread reader;
  private final DeltaSequences sequences = new DeltaSequences();
  private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
  private final AtomicLong callIds = new AtomicLong();
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile EnvironmentSupervisor.Spawn spawn;

  /** A link over {@code channel}; writes that could block an inline call are done on {@code blocking}. */
  EnvironmentLink(PythonEnvironment owner, FramedChannel channel, ResultApplier applier, Executor blocking,
      long number) {
    this.owner = owner;
    this.channel = channel;
    this.applier = applier;
    this.blocking = blocking;
    this.reader = new Thread(this::readFrames, "dataclay-ds-ee-result-reader-" + number);
    reader.setDaemon(true);
  }

  /** Starts reading the connection. */
  void start() {
    reader.start();
  }

  /** The process that proved itself with its hello, or null before the handshake. */
  EnvironmentSupervisor.Spawn spawn() {
    return spawn;
  }

  /** Records the process the hello proved this connection belongs to. */
  void authenticated(EnvironmentSupervisor.Spawn spawn) {
    this.spawn = spawn;
  }

  /**
   * Writes a request from the calling thread; false (the future untouched, nothing sent) when the
   * link had already ended, so the caller may try the next link. On a thread serving an
   * {@link InlineCall}, which must not block, the frame is written there only when that cannot
   * wait; otherwise the pool writes it.
   */
  boolean submit(ExecutionRequest request, CompletableFuture<byte[]> future) {
    long callId = callIds.incrementAndGet();
    pending.put(callId, new Pending(request, future));
    // close() sets `closed` before it fails the pending calls: a call registered after that sees
    // `closed` here; one registered before is failed by close() (then remove() finds nothing).
    if (closed.get()) {
      return pending.remove(callId) == null;
    }
    byte[] body = executeMessage(callId, request).toByteArray();
    try {
      if (!InlineCall.active()) {
        channel.write(body);
      } else if (!writesAtOnce(body) || !channel.tryWrite(body)) {
        writeOnPool(callId, body);
      }
    } catch (IOException e) {
      close("writing to the execution environment failed: " + e.getMessage(), false);
    }
    return true;
  }

  /** Writes a deploy or evict message; dropped when the link has ended (a new process reads state afresh). */
  void send(DataServiceMessage message) {
    if (closed.get()) {
      return;
    }
    try {
      channel.write(message.toByteArray());
    } catch (IOException e) {
      close("writing to the execution environment failed: " + e.getMessage(), false);
    }
  }

  // A blocking write waits only when the socket's send buffer is full, i.e. when the environment
  // left that much unread (Linux's default for Unix sockets is ~208 KiB). With at most
  // MAX_INLINE_IN_FLIGHT calls unanswered (plus one racing writer per event loop), each frame
  // <= 16 KiB, the unread requests stay far below that, so the write returns at once. (A large
  // deploy the environment has not read yet could still fill it; deploys are rare and read as
  // soon as one of the environment's threads is free.)
  private boolean writesAtOnce(byte[] body) {
    return body.length <= MAX_INLINE_FRAME_BYTES && pending.size() <= MAX_INLINE_IN_FLIGHT;
  }

  private void writeOnPool(long callId, byte[] body) {
    try {
      blocking.execute(() -> {
        if (closed.get()) {
          return;
        }
        try {
          channel.write(body);
        } catch (IOException e) {
          close("writing to the execution environment failed: " + e.getMessage(), false);
        }
      });
    } catch (RejectedExecutionException shuttingDown) {
      Pending p = pending.remove(callId);
      if (p != null) {
        p.future().completeExceptionally(new BackendUnavailableException("the Data Service is shutting down"));
      }
    }
  }

  /** Ends the link and fails every call in flight with BACKEND_UNAVAILABLE; idempotent. */
  void close(String reason) {
    close(reason, false);
  }

  private void close(String reason, boolean byEnvironment) {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    // The slot is freed before the socket closes, so a peer that saw the end may connect again.
    owner.linkClosed(this, byEnvironment);
    channel.close();
    List<Pending> failed = new ArrayList<>();
    for (Long callId : pending.keySet()) {
      Pending p = pending.remove(callId);
      if (p != null) {
        failed.add(p);
      }
    }
    for (Pending p : failed) {
      p.future().completeExceptionally(new BackendUnavailableException(reason + "; the call may not have run"));
    }
  }

  private void readFrames() {
    try {
      EnvironmentMessage first = channel.read(EnvironmentMessage.parser(), MAX_HELLO_BYTES);
      if (first == null) {
        close("the connection closed before its hello", false);
        return;
      }
      if (!first.hasHello()) {
        refuse("the first frame must be hello, not " + first.getKindCase());
        return;
      }
      String refusal = owner.handshake(this, first.getHello());
      if (refusal != null) {
        refuse(refusal);
        return;
      }
      readResults();
    } catch (MalformedFrameException e) {
      violation(e.getMessage());
    } catch (IOException e) {
      close("the connection to the execution environment broke: " + e.getMessage(), false);
    } catch (RuntimeException | Error e) {
      // Never leave calls hanging on a dead reader: whatever went wrong ends the link.
      LOG.log(Level.SEVERE, "reading from the execution environment failed", e);
      close("the Data Service failed reading from the execution environment: " + e, false);
      if (e instanceof Error error) {
        throw error;
      }
    }
  }

  private void readResults() throws IOException {
    while (true) {
      EnvironmentMessage message = channel.read(EnvironmentMessage.parser(), FramedChannel.MAX_FRAME_BYTES);
      if (message == null) {
        close("the execution environment closed its connection", true);
        return;
      }
      if (!message.hasResult()) {
        violation("expected a result, got " + message.getKindCase());
        return;
      }
      onResult(message.getResult());
    }
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
      InternalException failure = new InternalException("the execution environment sent an invalid result: "
          + bad.getMessage());
      owner.evict(List.of(p.request().objectId())).whenComplete((ignored, evictError) ->
          p.future().completeExceptionally(failure));
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

  private static DataServiceMessage executeMessage(long callId, ExecutionRequest request) {
    // The payload array is never written after the request was built, so it is shared, not copied.
    return DataServiceMessage.newBuilder().setExecute(ExecuteRequest.newBuilder()
        .setCallId(callId)
        .setSession(Messages.sessionInfo(request.session()))
        .setObjectId(request.objectId().toString())
        .setClassName(request.className())
        .setKind(kind(request.kind()))
        .setName(request.name())
        .setPayload(UnsafeByteOperations.unsafeWrap(request.payload()))).build();
  }

  /** Before the handshake: only this connection is dropped (it proved nothing about any process). */
  private void refuse(String what) {
    LOG.warning("refused an execution environment connection: " + what);
    close("the connection was refused: " + what, false);
  }

  private void violation(String what) {
    EnvironmentSupervisor.Spawn s = spawn;
    LOG.warning("execution environment" + (s == null ? "" : " (pid " + s.pid() + ")") + " broke the protocol: " + what);
    close("the execution environment broke the protocol: " + what, false);
  }

  private static io.dataclay.proto.ExecutionKind kind(ExecutionKind kind) {
    switch (kind) {
      case CALL_METHOD: return io.dataclay.proto.ExecutionKind.CALL_METHOD;
      case GET_FIELD: return io.dataclay.proto.ExecutionKind.GET_FIELD;
      default: return io.dataclay.proto.ExecutionKind.SET_FIELD;
    }
  }
}
