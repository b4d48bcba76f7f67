package io.dataclay.ds.ee;

import com.google.protobuf.UnsafeByteOperations;
import io.dataclay.ds.codec.Messages;
import io.dataclay.ds.environments.DeltaSequences;
import io.dataclay.ds.environments.ExecutionKind;
import io.dataclay.ds.environments.ExecutionRequest;
import io.dataclay.ds.environments.ExecutionResult;
import io.dataclay.ds.environments.SequencedDelta;
import io.dataclay.ds.session.InlineCall;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.CallTimedOutException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.proto.CallScope;
import io.dataclay.proto.DataServiceMessage;
import io.dataclay.proto.EnvironmentHello;
import io.dataclay.proto.EnvironmentMessage;
import io.dataclay.proto.ExecuteRequest;
import io.dataclay.proto.ExecuteResult;
import io.dataclay.proto.LoadRequest;
import io.dataclay.proto.RelayRequest;
import io.dataclay.proto.RelayReply;
import io.dataclay.rpc.GrpcErrors;
import io.dataclay.server.tracing.EnvironmentStep;
import io.dataclay.server.tracing.Tracing;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The link to one execution-environment process, over its standard input and output. Its reader
 * thread takes the hello (handed to the owner), then every frame in arrival order: results are
 * stored by the {@link io.dataclay.ds.execution.ResultApplier} before their call completes (so one
 * object's deltas apply in the order the environment sent them); loads and relays are answered
 * off the reader, in the session of the call in flight they name. Requests are written by the
 * calling thread (no hop); a thread that must not block writes only what fits in the pipe at once,
 * without waiting ({@link CallPipe}), and leaves the rest to the pool. Model deployments and
 * evictions are queued, written in order by the pool (a process that stops reading blocks no
 * caller of {@link #send} or {@link #evict}), and a request submitted once they returned is
 * written after them: the process has the models and has dropped the objects before it runs the
 * call. When the link ends, every call in flight fails with BACKEND_UNAVAILABLE.
 *
 * <p>Everything the process sends is hostile input: a frame that does not parse, a load or relay
 * naming no call in flight on this link, or a result for an unknown call ends or is refused, and
 * what it asks is answered only with what the call's caller may see.
 */
final class EnvironmentLink {
  /** The largest first frame accepted: a hello is a few dozen bytes. */
  static final long MAX_HELLO_BYTES = 64 * 1024;
  /**
   * While more calls than this are unanswered, the environment is behind, and a thread that must
   * not block leaves its request to the pool instead of writing it: the pool writes the queue
   * while the environment works, which may then read several frames at once. Writing every request
   * inline instead measured the same within the noise of runs with 8 and 16 clients (issue 25).
   */
  static final int INLINE_IN_FLIGHT = 4;
  private static final Logger LOG = Logger.getLogger(EnvironmentLink.class.getName());

  /**
   * The longest a call may outlive its deadline before it is failed: deadlines are checked by one
   * periodic sweep per link, every tenth of the deadline and at most this often.
   */
  static final long MAX_SWEEP_MS = 1000;

  /** A call sent down this link and not yet answered; {@code deadlineNanos} is on {@link System#nanoTime()}. */
  record Pending(ExecutionRequest request, CompletableFuture<byte[]> future, long deadlineNanos,
      long readsGeneration, EnvironmentStep step, Context trace) {}

  private final AccountEnvironment owner;
  private final FramedStream stream;
  private final LinkServices services;
  private final Thread reader;
  private final DeltaSequences sequences = new DeltaSequences();
  private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
  private final Set<UUID> loaded = ConcurrentHashMap.newKeySet();
  private final AtomicLong callIds = new AtomicLong();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final long deadlineMs;
  // The periodic deadline check, started by the first call; set under sweepLock.
  private final Object sweepLock = new Object();
  private volatile ScheduledFuture<?> sweep;
  // Frames to write in order, the head being written by the pool; guarded by itself.
  private final ArrayDeque<byte[]> ordered = new ArrayDeque<>();
  private volatile EnvironmentHello hello;

  /**
   * A link over {@code stream} to {@code owner}'s current process, whose calls fail with
   * CALL_TIMED_OUT, and the process restarts, after {@code deadlineMs} (0: never).
   */
  EnvironmentLink(AccountEnvironment owner, FramedStream stream, LinkServices services, String name,
      long deadlineMs) {
    this.owner = owner;
    this.stream = stream;
    this.services = services;
    this.deadlineMs = deadlineMs;
    this.reader = new Thread(this::readFrames, "dataclay-ds-ee-" + name);
    reader.setDaemon(true);
  }

  /** Starts reading the process's frames. */
  void start() {
    reader.start();
  }

  /** The language of the objects the process runs. */
  io.dataclay.common.Language language() {
    return owner.language();
  }

  /** The process's hello, or null before it arrived. */
  EnvironmentHello hello() {
    return hello;
  }

  /** Calls submitted to the process since it started. */
  long submitted() {
    return callIds.get();
  }

  /** Calls sent and not yet answered. */
  int inFlight() {
    return pending.size();
  }

  /** Whether the link has ended. */
  boolean closed() {
    return closed.get();
  }

  /**
   * Writes a request from the calling thread; false (the future untouched, nothing sent) when the
   * link had already ended, so the caller may start another process. On a thread serving an
   * {@link InlineCall}, which must not block, the frame is written there only when the pipe takes
   * it whole at once (a process that stopped reading, or shrank its pipe, holds up no network
   * thread) and at most {@link #INLINE_IN_FLIGHT} calls are unanswered; otherwise the pool writes
   * it. The call fails with CALL_TIMED_OUT after the link's deadline, and the process, which may be
   * stuck in it, is restarted. Its trace context is {@code trace} (captured where the call arrived):
   * when that trace is sampled, the call is sent with the traceparent of a span of this step, and the
   * steps the process reports in its result become that span's children.
   *
   * <p>A call costs its deadline one clock read: no timer task per call (at thousands of calls a
   * second, a task per call kept until its deadline of 30 minutes held millions of them).
   */
  boolean submit(ExecutionRequest request, CompletableFuture<byte[]> future, Context trace) {
    long callId = callIds.incrementAndGet();
    long deadlineNanos = 0;
    if (deadlineMs > 0) {
      deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(deadlineMs);
      if (deadlineNanos == 0) {
        deadlineNanos = 1; // 0 means none
      }
      if (sweep == null) {
        startSweep();
      }
    }
    EnvironmentStep step = EnvironmentStep.start(Tracing.current().tracer(), Clock.systemUTC(), trace,
        request.className(), request.name());
    if (!step.traceparent().isEmpty()) {
      // a call that ends without a result (timeout, link closed, refused) ends its span too
      future.whenComplete((value, error) -> step.end(error));
    }
    pending.put(callId, new Pending(request, future, deadlineNanos, owner.storedReads().generation(), step, trace));
    // close() sets `closed` before it fails the pending calls: a call registered after that sees
    // `closed` here; one registered before is failed by close() (then remove() finds nothing).
    if (closed.get()) {
      return pending.remove(callId) == null;
    }
    byte[] body = executeMessage(callId, request, step.traceparent()).toByteArray();
    try {
      if (queuedBehind(body)) {
        return true;
      }
      if (!InlineCall.active()) {
        stream.write(body);
      } else if (pending.size() > INLINE_IN_FLIGHT || !stream.tryWrite(body)) {
        queue(body);
      }
    } catch (IOException e) {
      close("writing to the execution environment failed: " + e.getMessage());
    }
    return true;
  }

  /**
   * Queues a deploy or evict message, written by the pool after every message queued before it and
   * before any request submitted after this returns; dropped when the link has ended (a new
   * process gets the models afresh and has loaded nothing).
   */
  void send(DataServiceMessage message) {
    if (!closed.get()) {
      queue(message.toByteArray());
    }
  }

  /** Writes an answer to the process's own request (load, relay) now, on the calling pool thread. */
  private void answer(DataServiceMessage message) {
    if (closed.get()) {
      return;
    }
    try {
      stream.write(message.toByteArray());
    } catch (IOException e) {
      close("writing to the execution environment failed: " + e.getMessage());
    }
  }

  /**
   * Sends an eviction of those of {@code ids} this process loaded (none: nothing is sent) and
   * forgets them; once the future completes (at once: the frame is queued), a call submitted
   * afterwards is written after the eviction. Written on the pool, never on the reader (which would
   * deadlock with a process blocked writing results the reader does not read).
   */
  CompletableFuture<Void> evict(Collection<UUID> ids) {
    List<String> held = new ArrayList<>();
    for (UUID id : ids) {
      if (loaded.remove(id)) {
        held.add(id.toString());
      }
    }
    if (held.isEmpty() || closed.get()) {
      return CompletableFuture.completedFuture(null);
    }
    send(DataServiceMessage.newBuilder().setEvict(io.dataclay.proto.EvictRequest.newBuilder().addAllIds(held)).build());
    return CompletableFuture.completedFuture(null);
  }

  /**
   * Tells the process to drop every object no call in flight has touched; written before any request
   * submitted after this returns. What it keeps stays marked loaded here: a stale mark costs at most
   * one needless eviction later, since what the process reloads is the stored state.
   */
  void unloadIdle() {
    send(DataServiceMessage.newBuilder().setEvict(io.dataclay.proto.EvictRequest.newBuilder().setIdle(true)).build());
  }

  /** Records that the process holds {@code id} in memory (before its state is read for it). */
  void holds(UUID id) {
    loaded.add(id);
  }

  /** Whether the process holds {@code id} as it is stored (it loaded or created it, and nobody changed it since). */
  boolean holdsNow(UUID id) {
    return loaded.contains(id);
  }

  /** Ends the link and fails every call in flight with BACKEND_UNAVAILABLE; idempotent. */
  void close(String reason) {
    close(reason, false);
  }

  private void close(String reason, boolean byEnvironment) {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    owner.linkClosed(this, byEnvironment);
    stream.close();
    List<Pending> failed = new ArrayList<>();
    for (Long callId : pending.keySet()) {
      Pending p = pending.remove(callId);
      if (p != null) {
        failed.add(p);
      }
    }
    synchronized (sweepLock) {
      if (sweep != null) {
        sweep.cancel(false);
      }
    }
    for (Pending p : failed) {
      p.future().completeExceptionally(new BackendUnavailableException(reason + "; the call may not have run"));
    }
  }

  // Queues `body` behind what is queued, if anything is: true when it was queued.
  private boolean queuedBehind(byte[] body) {
    synchronized (ordered) {
      if (ordered.isEmpty()) {
        return false;
      }
      ordered.addLast(body);
      return true;
    }
  }

  // Queues `body`; the first frame queued starts the pool writing the queue, in order.
  private void queue(byte[] body) {
    synchronized (ordered) {
      ordered.addLast(body);
      if (ordered.size() > 1) {
        return; // the pool is writing the queue
      }
    }
    try {
      services.blocking().execute(this::writeQueued);
    } catch (RejectedExecutionException shuttingDown) {
      close("the Data Service is shutting down");
    }
  }

  // A frame leaves the queue once written, so that a request finding the queue non-empty goes behind it.
  private void writeQueued() {
    while (true) {
      byte[] head;
      synchronized (ordered) {
        head = ordered.peekFirst();
      }
      if (head == null) {
        return;
      }
      if (!closed.get()) {
        try {
          stream.write(head);
        } catch (IOException e) {
          close("writing to the execution environment failed: " + e.getMessage());
        }
      }
      synchronized (ordered) {
        ordered.pollFirst();
        if (ordered.isEmpty()) {
          return;
        }
      }
    }
  }

  // Checks the deadlines every tenth of the deadline (at least every 10 ms, at most every MAX_SWEEP_MS).
  private void startSweep() {
    synchronized (sweepLock) {
      if (sweep != null || closed.get()) {
        return;
      }
      long every = Math.max(10, Math.min(MAX_SWEEP_MS, deadlineMs / 10));
      try {
        sweep = services.timer().scheduleWithFixedDelay(this::expireOverdue, every, every, TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException shuttingDown) {
        LOG.fine("no deadline check: the Data Service is shutting down");
      }
    }
  }

  // Fails the first call found past its deadline, which ends the link and every call in flight on it.
  private void expireOverdue() {
    long now = System.nanoTime();
    for (var entry : pending.entrySet()) {
      long due = entry.getValue().deadlineNanos();
      if (due != 0 && now - due >= 0) {
        expire(entry.getKey());
        return;
      }
    }
  }

  private void expire(long callId) {
    Pending p = pending.remove(callId);
    if (p == null) {
      return;
    }
    p.future().completeExceptionally(new CallTimedOutException(p.request().name() + " on object "
        + p.request().objectId() + " ran longer than this backend's per-call deadline of " + deadlineMs / 1000.0
        + " s (DATACLAY_CALL_TIMEOUT_S); nothing it changed was stored, and the execution environment of "
        + owner.account() + " was restarted"));
    LOG.warning("a call of " + owner.account() + " passed its deadline of " + deadlineMs + " ms: restarting its "
        + "execution environment");
    close("a call of this environment passed its deadline");
  }

  private void readFrames() {
    try {
      EnvironmentMessage first = stream.read(EnvironmentMessage.parser(), MAX_HELLO_BYTES);
      if (first == null) {
        close("the execution environment ended before its hello", true);
        return;
      }
      if (!first.hasHello()) {
        violation("the first frame must be hello, not " + first.getKindCase());
        return;
      }
      hello = first.getHello();
      owner.attached(this, hello);
      readRest();
    } catch (MalformedFrameException e) {
      violation(e.getMessage());
    } catch (IOException e) {
      close("the link to the execution environment broke: " + e.getMessage());
    } catch (RuntimeException | Error e) {
      // Never leave calls hanging on a dead reader: whatever went wrong ends the link.
      LOG.log(Level.SEVERE, "reading from the execution environment failed", e);
      close("the Data Service failed reading from the execution environment: " + e);
      if (e instanceof Error error) {
        throw error;
      }
    }
  }

  private void readRest() throws IOException {
    while (true) {
      EnvironmentMessage message = stream.read(EnvironmentMessage.parser(), FramedStream.MAX_FRAME_BYTES);
      if (message == null) {
        close("the execution environment closed its link", true);
        return;
      }
      switch (message.getKindCase()) {
        case RESULT -> onResult(message.getResult());
        case LOAD -> onLoad(message.getLoad());
        case RELAY -> onRelay(message.getRelay());
        default -> {
          violation("expected a result, load or relay, got " + message.getKindCase());
          return;
        }
      }
    }
  }

  private void onResult(ExecuteResult result) {
    Pending p = pending.remove(result.getCallId());
    if (p == null) {
      // a call that timed out, or a made-up ID: nothing of it may be stored
      LOG.warning("execution environment of " + owner.account() + " answered call " + result.getCallId()
          + ", which is not in flight; its changes are dropped");
      evictTouched(result);
      return;
    }
    // the process holds what it created in memory whatever becomes of it: a refusal must evict it too
    for (var o : result.getNewObjectsList()) {
      try {
        loaded.add(UUID.fromString(o.getId()));
      } catch (IllegalArgumentException ignored) {
        // not an object ID: the conversion below refuses the result
      }
    }
    ExecutionResult converted;
    try {
      converted = convert(result);
      p.step().end(StepSpans.of(result.getSpansList()), converted.error());
    } catch (InvalidArgumentException bad) {
      InternalException failure = new InternalException("the execution environment sent an invalid result: "
          + bad.getMessage());
      owner.evict(List.of(p.request().objectId())).whenComplete((ignored, evictError) ->
          p.future().completeExceptionally(failure));
      return;
    }
    if (!result.getStoredField().isEmpty() && converted.error() == null && converted.newObjects().isEmpty()
        && converted.deltas().isEmpty()) {
      owner.storedReads().learn(p.request(), result.getStoredField(), p.readsGeneration());
    }
    // applied in the call's trace context: what applying sends (replica changes, registrations) joins its trace
    CompletableFuture<byte[]> applied;
    try (Scope ignored = p.trace().makeCurrent()) {
      applied = services.applier().apply(owner, p.request(), converted, sequences);
    }
    applied.whenComplete((value, error) -> {
      if (error != null) {
        p.future().completeExceptionally(error);
      } else {
        p.future().complete(value);
      }
    });
  }

  // The process holds changes that will never be stored: it must reload those objects.
  private void evictTouched(ExecuteResult result) {
    List<UUID> ids = new ArrayList<>();
    for (var d : result.getDeltasList()) {
      try {
        ids.add(UUID.fromString(d.getId()));
      } catch (IllegalArgumentException ignored) {
        // not an object ID: nothing to evict
      }
    }
    evict(ids);
  }

  private void onLoad(LoadRequest request) {
    Session session = sessionOf(request.getCallId());
    services.run(() -> services.loads().serve(this, session, request), reply -> answer(
        DataServiceMessage.newBuilder().setLoaded(reply).build()));
  }

  private void onRelay(RelayRequest request) {
    Session session = sessionOf(request.getCallId());
    // a nested call is made in the trace of the call it is made for, under its environment step
    Pending p = pending.get(request.getCallId());
    Context trace = p == null ? Context.root() : p.step().context(p.trace());
    CompletableFuture<RelayReply> reply;
    try (Scope ignored = trace.makeCurrent()) {
      reply = services.relay().serve(session, request);
    }
    reply.thenAccept(r -> answer(DataServiceMessage.newBuilder().setRelayed(r).build()));
  }

  /** The session of a call in flight on this link, or null (the request is then refused). */
  private Session sessionOf(long callId) {
    Pending p = pending.get(callId);
    return p == null ? null : p.request().session();
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

  private static DataServiceMessage executeMessage(long callId, ExecutionRequest request, String traceparent) {
    Session s = request.session();
    // The payload array is never written after the request was built, so it is shared, not copied.
    return DataServiceMessage.newBuilder().setExecute(ExecuteRequest.newBuilder()
        .setCallId(callId)
        .setCaller(CallScope.newBuilder().setUsername(s.username()).setDataset(s.dataset())
            .addAllDatasets(s.datasets()).addAllReadOnlyDatasets(s.readOnlyDatasets()))
        .setObjectId(request.objectId().toString())
        .setClassName(request.className())
        .setKind(kind(request.kind()))
        .setName(request.name())
        .setTraceparent(traceparent)
        .setPayload(UnsafeByteOperations.unsafeWrap(request.payload()))).build();
  }

  private void violation(String what) {
    LOG.warning("execution environment of " + owner.account() + " broke the protocol: " + what);
    close("the execution environment broke the protocol: " + what);
  }

  private static io.dataclay.proto.ExecutionKind kind(ExecutionKind kind) {
    switch (kind) {
      case CALL_METHOD: return io.dataclay.proto.ExecutionKind.CALL_METHOD;
      case GET_FIELD: return io.dataclay.proto.ExecutionKind.GET_FIELD;
      default: return io.dataclay.proto.ExecutionKind.SET_FIELD;
    }
  }
}
