package io.dataclay.ds.replication;

import io.dataclay.ds.registration.ObjectDirectory;
import io.dataclay.ds.registration.ObjectLocation;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.opentelemetry.context.Context;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * The replicas of the objects whose master copy is here, and the rule that keeps them equal to
 * the master: a change is stored here and passed on to every replica before its call returns.
 * Copying an object to a new replica excludes changes for its duration, so that no change falls
 * between the state read for the copy and the replica joining the set.
 */
public final class ReplicaSets {
  private static final Logger LOG = Logger.getLogger(ReplicaSets.class.getName());

  private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

  private final Map<UUID, Set<String>> replicas = new ConcurrentHashMap<>();
  private final Map<String, CompletableFuture<Void>> queues = new ConcurrentHashMap<>();
  private final Executor senders;
  private final ReentrantReadWriteLock copying = new ReentrantReadWriteLock();
  private final PeerBackends peers;
  private final ObjectDirectory directory;
  private final Mastership mastership;
  // for the backend's metrics
  private final AtomicInteger awaiting = new AtomicInteger();
  private final LongAdder sends = new LongAdder();
  private final LongAdder sendNanos = new LongAdder();
  private final LongAdder dropped = new LongAdder();

  /**
   * Replica sets passing changes on through {@code peers} on {@code senders}' threads, dropping
   * dead replicas in {@code directory}, acting as master while {@code mastership}'s lease lasts.
   */
  public ReplicaSets(PeerBackends peers, ObjectDirectory directory, Mastership mastership, Executor senders) {
    this.senders = senders;
    this.peers = peers;
    this.directory = directory;
    this.mastership = mastership;
  }

  /**
   * Refuses to serve {@code id}, mastered here, when it has replicas and the master lease has run
   * out (a replica may be being promoted: the replicas serve it).
   */
  public void requireLease(UUID id) {
    if (!replicas.isEmpty() && replicas.containsKey(id)) {
      mastership.requireLease(id);
    }
  }

  /** Learns the replica sets the Logic Module records for objects mastered here (at start). */
  public void load(List<ObjectLocation> locations) {
    for (ObjectLocation l : locations) {
      if (!l.replicaBackendIds().isEmpty()) {
        replicas.computeIfAbsent(l.id(), k -> ConcurrentHashMap.newKeySet()).addAll(l.replicaBackendIds());
      }
    }
  }

  /** The backends holding replicas of {@code id} (empty when none). */
  public Set<String> of(UUID id) {
    Set<String> set = replicas.get(id);
    return set == null ? Set.of() : Set.copyOf(set);
  }

  /** Records that {@code backendId} holds replicas of {@code ids}. */
  public void add(Collection<UUID> ids, String backendId) {
    for (UUID id : ids) {
      replicas.computeIfAbsent(id, k -> ConcurrentHashMap.newKeySet()).add(backendId);
    }
  }

  /** Sets the replicas of an object that became mastered here (a move). */
  public void set(UUID id, Set<String> backendIds) {
    if (backendIds.isEmpty()) {
      replicas.remove(id);
    } else {
      Set<String> set = ConcurrentHashMap.newKeySet();
      set.addAll(backendIds);
      replicas.put(id, set);
    }
  }

  /** Drops one backend from the replicas of {@code id}. */
  public void drop(UUID id, String backendId) {
    Set<String> set = replicas.get(id);
    if (set != null) {
      set.remove(backendId);
    }
  }

  /** Forgets the replicas of objects no longer mastered here. */
  public void forget(Collection<UUID> ids) {
    ids.forEach(replicas::remove);
  }

  /** Runs {@code body} with changes excluded (it reads state for new copies and records them). */
  public <T> T exclusively(Supplier<T> body) {
    copying.writeLock().lock();
    try {
      return body.get();
    } finally {
      copying.writeLock().unlock();
    }
  }

  /**
   * Stores changes ({@code store}) here at once and passes {@code deltas} of replicated objects on
   * to their replicas; the returned future completes when every replica took them. Changes reach
   * each replica backend in the order they were stored here, on a queue of its own, so a slow or
   * lost replica never holds up the caller's thread (the execution environment's link, which
   * applies every call's result in order) nor the changes going to other backends. A replica that
   * cannot take a change is dropped from the set (here and in the Logic Module) so that nobody
   * reads it any more; if the Logic Module cannot record that either, the future fails (the change
   * is stored here, but it is not acknowledged).
   */
  public CompletableFuture<Void> writeThrough(List<ObjectDelta> deltas, Runnable store) {
    copying.readLock().lock();
    try {
      if (!replicas.isEmpty()) {
        deltas.forEach(d -> requireLease(d.id())); // before anything is stored
      }
      store.run();
      return replicas.isEmpty() ? DONE : pass(deltas);
    } finally {
      copying.readLock().unlock();
    }
  }

  // Enqueued while the change is excluded from new copies (the read lock): a replica joining later
  // got the stored state in its copy, one in the set now gets the change, in order.
  private CompletableFuture<Void> pass(List<ObjectDelta> deltas) {
    Map<String, List<ObjectDelta>> byBackend = new LinkedHashMap<>();
    for (ObjectDelta d : deltas) {
      Set<String> set = replicas.get(d.id());
      if (set != null) {
        for (String backend : set) {
          byBackend.computeIfAbsent(backend, k -> new ArrayList<>()).add(d);
        }
      }
    }
    List<CompletableFuture<Void>> sent = new ArrayList<>(byBackend.size());
    awaiting.addAndGet(byBackend.size());
    long queued = System.nanoTime(); // the lag counts the wait behind earlier changes to the same backend
    // each send runs in the trace context of the call whose changes it carries: its client span,
    // and the replica's server span, join that call's trace
    Context trace = Context.current();
    byBackend.forEach((backend, changes) -> sent.add(queues.compute(backend, (k, tail) ->
        (tail == null ? DONE : tail.handle((ok, failed) -> null))
            .thenRunAsync(trace.wrap(() -> send(backend, changes, queued)), senders))));
    return CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new));
  }

  private void send(String backend, List<ObjectDelta> changes, long queued) {
    try {
      sendOrDrop(backend, changes, System.nanoTime());
    } finally {
      awaiting.decrementAndGet();
      sends.increment();
      sendNanos.add(System.nanoTime() - queued);
    }
  }

  private void sendOrDrop(String backend, List<ObjectDelta> changes, long started) {
    try {
      try {
        peers.applyDeltas(backend, changes);
      } catch (BackendUnavailableException transport) {
        if (peers.wentSilent(System.nanoTime() - started)) {
          throw transport;
        }
        // A connection broken by an earlier outage fails its next call at once ("io exception"):
        // once more on a new one before the replica is dropped. Changes apply idempotently.
        peers.applyDeltas(backend, changes);
      }
    } catch (DataClayException failed) {
      List<UUID> ids = changes.stream().map(ObjectDelta::id).distinct().toList();
      LOG.warning("dropping the replicas on backend " + backend + " of " + ids.size()
          + " objects: it did not take a change (" + failed.getMessage() + ")");
      try {
        directory.removeReplicas(ids, backend);
      } catch (PermissionDeniedException fenced) {
        // The Logic Module says another backend masters these now: a replica was promoted while
        // this one was cut off. The change stays unacknowledged; the caller retries on the new
        // master, and this backend drops its stale copies when its heartbeat brings the demotions.
        throw new BackendUnavailableException("this backend no longer holds the master copy of " + ids.size()
            + " object(s) (a replica was promoted while it was unreachable): " + fenced.getMessage());
      }
      ids.forEach(id -> drop(id, backend));
      dropped.add(ids.size());
    }
  }

  /** Batches of changes queued for a replica backend and not acknowledged yet. */
  public int acknowledgementsAwaited() {
    return awaiting.get();
  }

  /** Batches of changes sent to replica backends since start (taken or not). */
  public long batchesSent() {
    return sends.sum();
  }

  /** Seconds those batches took, from being queued (after the stored change) to being taken or failing, summed. */
  public double sendSeconds() {
    return sendNanos.sum() / 1e9;
  }

  /** Replicas dropped because their backend did not take a change, since start. */
  public long replicasDropped() {
    return dropped.sum();
  }
}
