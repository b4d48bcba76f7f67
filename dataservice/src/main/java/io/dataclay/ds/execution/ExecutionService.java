package io.dataclay.ds.execution;

import io.dataclay.ds.collection.ReferenceRecorder;
import io.dataclay.ds.environments.Environments;
import io.dataclay.ds.environments.ExecutionEnvironment;
import io.dataclay.ds.environments.ExecutionKind;
import io.dataclay.ds.environments.ExecutionRequest;
import io.dataclay.ds.models.ClassAvailability;
import io.dataclay.ds.objects.QuotaStore;
import io.dataclay.ds.replication.ReplicaSets;
import io.dataclay.ds.session.InlineCall;
import io.dataclay.ds.session.Permissions;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.exceptions.InvalidArgumentException;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Method calls and field accesses on stored objects: finds the object's header, checks the
 * caller may access it and use its class, and hands the work to the environment of the object's
 * language. The warm path is a store header lookup (served from the engine's memory) and two
 * permission checks.
 */
public final class ExecutionService {
  private final ObjectStore store;
  private final Environments environments;
  private final ReferenceRecorder recorder;
  private final ClassAvailability models;
  private final ReplicaSets replicas;
  private final Executor blocking;
  private final long maxResultBytes;

  /** FlushAll: the caller's processes here drop the objects no call is using; returns how many were told. */
  public int unloadIdle(Session session) {
    return environments.unloadIdle(session.username());
  }

  /**
   * The service over a store and this backend's environments; calls wait for {@code models}' start-up
   * install, and replicated objects mastered here are served while {@code replicas} hold the lease.
   * A class that must be fetched from the Logic Module first is checked on {@code blocking} when
   * the call is served on a network thread.
   */
  public ExecutionService(ObjectStore store, Environments environments, ReferenceRecorder recorder,
      ClassAvailability models, ReplicaSets replicas, Executor blocking) {
    this(store, environments, recorder, models, replicas, blocking, Long.MAX_VALUE);
  }

  /** As above; a result (a method's or a field's value) above {@code maxResultBytes} is refused. */
  public ExecutionService(ObjectStore store, Environments environments, ReferenceRecorder recorder,
      ClassAvailability models, ReplicaSets replicas, Executor blocking, long maxResultBytes) {
    this.maxResultBytes = maxResultBytes;
    this.models = models;
    this.blocking = blocking;
    this.replicas = replicas;
    this.store = store;
    this.environments = environments;
    this.recorder = recorder;
  }

  /**
   * Runs {@code kind} on object {@code id}; the future completes once the call's changes are
   * stored. Throws at once (rather than failing the future) when the object is not here, the
   * session may not access it or use its class (see {@link ClassAvailability#requireUsable}), no
   * environment runs its language, or this backend is still installing its models after the wait.
   */
  public CompletableFuture<byte[]> execute(
      Session session, UUID id, ExecutionKind kind, String name, byte[] payload) {
    return execute(session, id, kind, name, payload, false);
  }

  /** As {@link #execute(Session, UUID, ExecutionKind, String, byte[])}; {@code nested}: made by model code in a backend. */
  public CompletableFuture<byte[]> execute(
      Session session, UUID id, ExecutionKind kind, String name, byte[] payload, boolean nested) {
    models.awaitReady(); // a (re)starting backend runs no method before its models are installed
    ObjectHeader header = store.header(id).orElseThrow(() -> Permissions.notStoredHere(id));
    if (kind == ExecutionKind.SET_FIELD) {
      Permissions.checkWrite(session, id, header);
    } else {
      Permissions.check(session, id, header); // a method that changes the object is checked on its result
    }
    if (header.masterBackendId() == null) {
      replicas.requireLease(id);
    }
    ExecutionRequest request = new ExecutionRequest(session, id, header.className(), kind, name, payload, nested);
    if (!models.isDecidedNow(header.language(), header.className()) && InlineCall.active()) {
      // the class must be fetched first, which may block: not on this network thread
      return bounded(request, CompletableFuture.supplyAsync(() -> admit(request, header), blocking)
          .thenCompose(env -> env.execute(request)));
    }
    ExecutionEnvironment env = admit(request, header);
    String field = env.storedField(request);
    return bounded(request, field == null ? env.execute(request) : fromStore(request, field, env));
  }

  /**
   * Answers a read with field {@code field} of the object as stored, which its environment vouched
   * is its answer (see {@link ExecutionEnvironment#storedField}), without waking the environment;
   * an object that lacks the field goes to the environment. Engines that wait on a server are read
   * off the network thread.
   */
  private CompletableFuture<byte[]> fromStore(ExecutionRequest request, String field, ExecutionEnvironment env) {
    if (!store.writesWithoutWaiting() && InlineCall.active()) {
      return CompletableFuture.supplyAsync(() -> storedValue(request.objectId(), field), blocking)
          .thenCompose(value -> value != null ? CompletableFuture.completedFuture(value) : env.execute(request));
    }
    byte[] value = storedValue(request.objectId(), field);
    return value != null ? CompletableFuture.completedFuture(value) : env.execute(request);
  }

  private byte[] storedValue(UUID id, String field) {
    return store.get(id).map(o -> o.fields().get(field)).map(FieldValue::value).orElse(null);
  }

  // A result is copied into the reply and the network buffers: one above the value cap is refused
  // here, before those copies (the call's changes are already stored; only the answer is lost).
  private CompletableFuture<byte[]> bounded(ExecutionRequest request, CompletableFuture<byte[]> result) {
    if (maxResultBytes == Long.MAX_VALUE) {
      return result;
    }
    return result.thenApply(value -> {
      if (value != null && value.length > maxResultBytes) {
        throw new InvalidArgumentException(String.format("the result of %s '%s' on object %s is %,d bytes, more than"
            + " %s allows (%,d); the call's changes were stored. Return a smaller value (keep a big one in"
            + " fields of several objects)", request.kind() == ExecutionKind.GET_FIELD ? "field" : "method",
            request.name(), request.objectId(), value.length, QuotaStore.MAX_VALUE_SIZE, maxResultBytes));
      }
      return value;
    });
  }

  // The class check comes before the environment is looked up: a refused class is refused alike
  // on every backend, whichever environments it runs.
  private ExecutionEnvironment admit(ExecutionRequest request, ObjectHeader header) {
    models.requireUsable(request.session(), header.language(), header.className(), "object " + request.objectId());
    recorder.used(request.session(), request.objectId());
    return environments.of(header.language());
  }
}
