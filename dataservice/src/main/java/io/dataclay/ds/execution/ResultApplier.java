package io.dataclay.ds.execution;

import io.dataclay.ds.collection.ReferenceRecorder;
import io.dataclay.ds.environments.DeltaSequences;
import io.dataclay.ds.environments.Environments;
import io.dataclay.ds.environments.ExecutionEnvironment;
import io.dataclay.ds.environments.ExecutionRequest;
import io.dataclay.ds.environments.ExecutionResult;
import io.dataclay.ds.environments.SequencedDelta;
import io.dataclay.ds.models.ClassAvailability;
import io.dataclay.ds.objects.IdClaims;
import io.dataclay.ds.objects.ReferenceAccess;
import io.dataclay.ds.registration.LogicModuleGateway;
import io.dataclay.ds.replication.ReplicaSets;
import io.dataclay.ds.session.Permissions;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.ConcurrentChangeException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.ObjectAlreadyExistsException;
import io.opentelemetry.context.Context;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Makes an execution result durable before its caller is answered: stores the objects the call
 * made persistent (in the caller's dataset), applies its deltas, then registers the new objects
 * with the Logic Module. When storing fails, the touched objects are evicted from the environment
 * (so it reloads the durable state) and the call fails with the storing error.
 */
public final class ResultApplier {
  private final ObjectStore store;
  private final LogicModuleGateway lm;
  private final IdClaims claims;
  private final Executor blocking;
  private final ReplicaSets replicas;
  private final ReferenceRecorder recorder;
  private final ClassAvailability classes;
  private final Environments environments;
  private final ObjectLocks locks = new ObjectLocks();
  private final ReferenceAccess references;

  /**
   * An applier writing to {@code store} and passing changes on to {@code replicas}; Logic Module
   * calls run on {@code blocking}. New objects must be of classes the caller may use ({@code
   * classes}); the other processes of {@code environments} that hold a changed object drop it
   * before the call is answered. A reference the result stores must name an object the caller may
   * read ({@code references}).
   */
  public ResultApplier(ObjectStore store, LogicModuleGateway lm, IdClaims claims, Executor blocking,
      ReplicaSets replicas, ReferenceRecorder recorder, ClassAvailability classes, Environments environments,
      ReferenceAccess references) {
    this.references = references;
    this.classes = classes;
    this.environments = environments;
    this.store = store;
    this.lm = lm;
    this.claims = claims;
    this.blocking = blocking;
    this.replicas = replicas;
    this.recorder = recorder;
  }

  /**
   * Stores the result's changes in the calling thread (environments call this in the order their
   * results were produced, so deltas of one object apply in order), then registers new objects
   * off that thread. The future completes with the value, or exceptionally with the call's error
   * or the storing error.
   */
  public CompletableFuture<byte[]> apply(
      ExecutionEnvironment source, ExecutionRequest request, ExecutionResult result, DeltaSequences sequences) {
    List<StoredObject> created = inDataset(result.newObjects(), request.session().dataset());
    if (created.isEmpty() && result.deltas().isEmpty()) {
      return finish(result);
    }
    if (!created.isEmpty() && !request.session().mayWrite(request.session().dataset())) {
      return refused(source, result, new io.dataclay.exceptions.PermissionDeniedException("the call made "
          + created.size() + " new object(s) persistent in dataset " + request.session().dataset() + ", which the"
          + " session of " + request.session().username() + " may only read: nothing of the call was applied"));
    }
    // the environment says which classes it made objects of: the caller must be allowed to use each,
    // and to read each object a new or changed field references. Checking a reference may wait for
    // the Logic Module (once per object of another backend, then remembered): this thread then
    // waits, as the environment's next results do behind it.
    try {
      for (int i = 0; i < created.size(); i++) {
        ObjectHeader h = created.get(i).header();
        classes.requireUsableNow(request.session(), h.language(), h.className(), "a new object of the call");
      }
      Set<UUID> made = new HashSet<>();
      created.forEach(o -> made.add(o.id()));
      for (StoredObject o : created) {
        references.check(request.session(), o.fields(), made, "new object " + o.id());
      }
      for (SequencedDelta d : result.deltas()) {
        references.check(request.session(), d.delta().changed(), made, "object " + d.delta().id());
      }
    } catch (DataClayException e) {
      return refused(source, result, e);
    }
    List<UUID> newIds = created.stream().map(StoredObject::id).toList();
    // the registration runs on another thread, maybe after the replicas answered: in the call's trace
    Context trace = Context.current();
    CompletableFuture<Void> replicated;
    try {
      recorder.held(request.session(), newIds);
      claims.claim(newIds);
      try {
        replicated = storeChanges(source, request.session(), created, result.deltas(), sequences);
      } catch (RuntimeException e) {
        claims.release(newIds);
        throw e;
      }
    } catch (RuntimeException e) {
      return refused(source, result, asDataClay(e));
    }
    // Stored here; the replicas take the changes on queues of their own, and the caller hears of
    // the call once they did (this thread goes on to the environment's next result meanwhile).
    return replicated.handle((ok, failed) -> failed).thenCompose(failed -> {
      if (failed != null) {
        // Crash note: as below, new objects never registered are unreachable garbage if this dies first.
        created.forEach(o -> store.remove(o.id()));
        claims.release(newIds);
        return refused(source, result, asDataClay(unwrap(failed)));
      }
      if (created.isEmpty()) {
        return finish(result);
      }
      return CompletableFuture.runAsync(trace.wrap(() -> register(source, created, result)), blocking)
          .whenComplete((ignored, error) -> claims.release(newIds))
          .thenCompose(ignored -> finish(result));
    });
  }

  // The caller hears of a refusal only once the environment is sure to drop the state the refused
  // call left in its memory.
  private static CompletableFuture<byte[]> refused(ExecutionEnvironment source, ExecutionResult result,
      DataClayException failure) {
    return source.evict(touched(result)).handle((ignored, evictError) -> null)
        .thenCompose(ignored -> CompletableFuture.failedFuture(failure));
  }

  // Each object's change is atomic; the set of them is not. When delta k fails, the new objects
  // and deltas before k stay stored, and the caller evicts every touched object from the
  // environment so that its memory matches the store again. Returns when the changes are stored
  // here, with the future of their replication.
  private CompletableFuture<Void> storeChanges(ExecutionEnvironment source, Session session,
      List<StoredObject> created, List<SequencedDelta> deltas, DeltaSequences sequences) {
    List<ObjectDelta> changes = new ArrayList<>(deltas.size());
    List<UUID> changed = new ArrayList<>(deltas.size());
    for (SequencedDelta d : deltas) {
      checkChangeable(session, d.delta().id());
      changes.add(d.delta());
      changed.add(d.delta().id());
    }
    // The check that the writer computed each change from the stored state, the change, and the
    // invalidation of every other process's copy happen under the objects' locks: of two processes
    // that changed one object from the same state, the second is refused, never lost (optimistic
    // concurrency: processes of different accounts hold their own copies of shared objects).
    return locks.withAll(changed, () -> {
      for (UUID id : changed) {
        if (!source.holdsCurrent(id)) {
          throw new ConcurrentChangeException("object " + id + " was changed by another call (of another account, or"
              + " a replica or version update) while this call ran on an older copy of it: nothing of this call was"
              + " stored; call it again");
        }
      }
      CompletableFuture<Void> replicated = storeLocked(created, deltas, changes, sequences);
      // Other processes holding a changed object drop it before anyone hears of this call.
      CompletableFuture<Void> evicted = environments.changed(source, changed);
      return CompletableFuture.allOf(replicated, evicted);
    });
  }

  private CompletableFuture<Void> storeLocked(List<StoredObject> created, List<SequencedDelta> deltas,
      List<ObjectDelta> changes, DeltaSequences sequences) {
    for (StoredObject o : created) {
      if (store.header(o.id()).isPresent()) {
        throw new ObjectAlreadyExistsException("the execution environment made object " + o.id()
            + " persistent, but an object with that ID is already stored");
      }
    }
    if (!created.isEmpty()) {
      store.putAll(created);
    }
    try {
      return replicas.writeThrough(changes, () -> {
        for (SequencedDelta d : deltas) {
          // A delta of an object not stored here fails inside applyDelta (OBJECT_DOES_NOT_EXIST).
          sequences.applyIfNewer(d.delta().id(), d.sequence(), () -> store.applyDelta(d.delta()));
        }
      });
    } catch (RuntimeException e) {
      // The new objects were never registered: remove them (a crash before this leaves them
      // unregistered, i.e. unreachable garbage, never half an object).
      for (StoredObject o : created) {
        store.remove(o.id());
      }
      throw e;
    }
  }

  // Checked before anything is stored. A replica only ever changes by its master's deltas: a call
  // that would change it here is refused (the client retries on the master).
  private void checkChangeable(Session session, UUID id) {
    Optional<ObjectHeader> header = store.header(id);
    if (header.isEmpty()) {
      return;
    }
    Permissions.checkWrite(session, id, header.get());
    if (header.get().masterBackendId() != null) {
      throw new BackendUnavailableException("object " + id + " is a replica on this backend: a call that changes it"
          + " must run on its master copy, on backend " + header.get().masterBackendId());
    }
  }

  private void register(ExecutionEnvironment source, List<StoredObject> created, ExecutionResult result) {
    try {
      lm.registerObjects(created, null, null);
    } catch (RuntimeException e) {
      // Crash note: if the Data Service dies before this removal, its next start registers them
      // again, or removes them when the Logic Module refuses them: never half an object.
      for (StoredObject o : created) {
        store.remove(o.id());
      }
      source.evict(touched(result)).handle((ignored, evictError) -> null).join(); // before the caller hears of it
      throw e;
    }
  }

  private static CompletableFuture<byte[]> finish(ExecutionResult result) {
    return result.error() != null
        ? CompletableFuture.failedFuture(result.error())
        : CompletableFuture.completedFuture(result.value());
  }

  // New objects are plain objects of the caller's dataset, whatever the environment claimed.
  private static List<StoredObject> inDataset(List<StoredObject> objects, String dataset) {
    List<StoredObject> out = new ArrayList<>(objects.size());
    for (StoredObject o : objects) {
      ObjectHeader h = o.header();
      out.add(new StoredObject(o.id(), new ObjectHeader(h.className(), h.language(), dataset, null, null),
          o.fields()));
    }
    return out;
  }

  private static Set<UUID> touched(ExecutionResult result) {
    Set<UUID> ids = new LinkedHashSet<>();
    result.newObjects().forEach(o -> ids.add(o.id()));
    result.deltas().forEach(d -> ids.add(d.delta().id()));
    return ids;
  }

  private static RuntimeException unwrap(Throwable t) {
    Throwable cause = t instanceof java.util.concurrent.CompletionException && t.getCause() != null ? t.getCause() : t;
    return cause instanceof RuntimeException r ? r : new InternalException("replicating the call's changes failed: " + cause);
  }

  private static DataClayException asDataClay(RuntimeException e) {
    return e instanceof DataClayException d ? d
        : new InternalException("storing the call's changes failed: " + e);
  }
}
