package io.dataclay.ds.collection;

import io.dataclay.ds.session.Permissions;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;

/**
 * This backend's side of garbage collection (docs/internals.md "Garbage collection"): what client
 * sessions hold here, the references written while a collection is open, and the collection
 * steps the Logic Module drives (begin, stream the reference graph, end).
 *
 * <p>Every write that can add a reference (new objects, deltas, copies) goes through the store
 * {@link #recordingStore} returns: the references are recorded before the write, under the read side of
 * a gate whose write side {@link #begin} takes. So a write that started before a collection began
 * has finished (and GetReferences, which comes after, reads its result), and one that starts later
 * is recorded.
 */
public final class ReferenceRecorder {
  /** Default budget of held and recorded IDs (about 150 MiB at most). */
  public static final long DEFAULT_BUDGET = 4_000_000;
  /** Objects per ReferenceBatch. */
  public static final int BATCH = 1000;

  /** One stored object and the objects it references. */
  public record Outgoing(UUID id, Set<UUID> references) {}

  /** What EndCollection answers: references written since begin, and every session's holdings. */
  public record Recorded(List<UUID> referenced, Map<String, List<UUID>> held) {}

  private final ObjectStore store;
  private final Function<String, Session> sessions;
  private final Executor background;
  private final long budget;
  private final SessionHoldings holdings;
  private final ReentrantReadWriteLock gate = new ReentrantReadWriteLock();
  private final AtomicLong collected = new AtomicLong();
  // guarded by the gate: changed under its write lock, read under either
  private long open;
  private String collectorToken;
  // guarded by this
  private UuidSet referenced = new UuidSet();
  private boolean referencedOverflow;

  /**
   * A recorder over {@code store}, tracking up to {@code budget} held IDs and as many recorded
   * ones. In the {@code background} it asks {@code sessions} (a token's session, throwing
   * NOT_AUTHENTICATED once it is closed or expired:
   * {@link io.dataclay.ds.session.SessionCache#resolve}) which sessions ended.
   */
  public ReferenceRecorder(ObjectStore store, Function<String, Session> sessions, Executor background, long budget) {
    this.store = store;
    this.sessions = sessions;
    this.background = background;
    this.budget = budget;
    this.holdings = new SessionHoldings(budget, System::currentTimeMillis);
  }

  /**
   * The store every Data Service component must write through: its writes record the references
   * they add while a collection is open (GetReferences reads the engine underneath).
   */
  public ObjectStore recordingStore() {
    return new RecordingStore(store, this);
  }

  /** Records that {@code session} called or read object {@code id} here. */
  public void used(Session session, UUID id) {
    holdings.hold(session, List.of(id));
  }

  /** Records that {@code session} holds {@code ids}: objects it made persistent, created or versioned. */
  public void held(Session session, Collection<UUID> ids) {
    if (!ids.isEmpty()) {
      holdings.hold(session, ids);
    }
  }

  /** Runs {@code recordIfOpen} when a collection is open, then {@code write}, both inside the gate. */
  void gated(Runnable recordIfOpen, Runnable write) {
    // Crash note: nothing here is durable. A backend that restarts during a collection answers
    // EndCollection with an error (the collection is no longer open), so that collection removes
    // nothing; what sessions held before the restart is forgotten (see docs/internals.md).
    gate.readLock().lock();
    try {
      if (open != 0) {
        recordIfOpen.run();
      }
      write.run();
    } finally {
      gate.readLock().unlock();
    }
  }

  /** Counts objects {@code caller} removed: collected garbage when the caller runs the collections. */
  public void deleted(Session caller, int removed) {
    gate.readLock().lock();
    try {
      if (caller.token().equals(collectorToken)) {
        collected.addAndGet(removed);
      }
    } finally {
      gate.readLock().unlock();
    }
  }

  /** Objects removed by garbage collection since this backend started. */
  public long collected() {
    return collected.get();
  }

  /** Starts collection {@code id} (administrators): references written from now on are recorded. */
  public void begin(Session caller, long id) {
    requireCollector(caller, "BeginCollection", id);
    gate.writeLock().lock();
    try {
      // a collection left open (its Logic Module stopped) is replaced
      open = id;
      collectorToken = caller.token();
      synchronized (this) {
        referenced = new UuidSet();
        referencedOverflow = false;
      }
    } finally {
      gate.writeLock().unlock();
    }
  }

  /**
   * The outgoing references of every object stored when this is called, {@link #BATCH} objects
   * per element, read as the iterator advances (objects stored later are recorded instead).
   */
  public Iterator<List<Outgoing>> references(Session caller, long id) {
    requireOpen(caller, "GetReferences", id);
    List<UUID> ids = new ArrayList<>();
    store.forEachId(ids::add);
    return new Iterator<>() {
      private int next;

      @Override
      public boolean hasNext() {
        return next < ids.size();
      }

      @Override
      public List<Outgoing> next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        List<Outgoing> batch = new ArrayList<>(BATCH);
        int end = Math.min(ids.size(), next + BATCH);
        for (; next < end; next++) {
          UUID oid = ids.get(next);
          store.references(oid).ifPresent(refs -> batch.add(new Outgoing(oid, withOriginal(oid, refs))));
        }
        return batch;
      }
    };
  }

  /**
   * Ends collection {@code id}: answers what was recorded and what sessions hold, stops recording,
   * and then forgets, in the background, the sessions that ended.
   *
   * @throws BackendUnavailableException when this backend could not track everything (a budget
   *     was exceeded): the collection must not remove anything
   */
  public Recorded end(Session caller, long id) {
    requireOpen(caller, "EndCollection", id);
    UuidSet recorded;
    boolean overflow;
    gate.writeLock().lock();
    try {
      open = 0;
      synchronized (this) {
        recorded = referenced;
        overflow = referencedOverflow;
        referenced = new UuidSet();
        referencedOverflow = false;
      }
    } finally {
      gate.writeLock().unlock();
    }
    SessionHoldings.Snapshot held = holdings.snapshot();
    forgetEndedSessions();
    if (overflow) {
      throw new BackendUnavailableException("more than " + budget + " objects became referenced during collection "
          + id + ": this backend could not record them all");
    }
    if (!held.overflowed().isEmpty()) {
      throw new BackendUnavailableException(held.overflowed().size() + " open session(s) hold more objects than this"
          + " backend tracks (" + budget + " IDs): collections wait until they end");
    }
    List<UUID> ids = new ArrayList<>(recorded.size());
    recorded.forEach(ids::add);
    return new Recorded(ids, held.held());
  }

  /**
   * Records the references a written object adds: those of its fields and, for a version, its original
   * (the caller is inside {@link #gated}).
   */
  void record(ObjectHeader header, Collection<FieldValue> fields) {
    synchronized (this) {
      if (header != null && header.versionOf() != null && !add(UUID.fromString(header.versionOf()))) {
        return;
      }
      for (FieldValue f : fields) {
        for (UUID r : f.references()) {
          if (!add(r)) {
            return;
          }
        }
      }
    }
  }

  // guarded by this; false once the budget is exceeded
  private boolean add(UUID referencedId) {
    if (referenced.size() >= budget) {
      referencedOverflow = true;
      return false;
    }
    referenced.add(referencedId);
    return true;
  }

  // A version references the original it consolidates into: while the version is kept, so is the
  // original (a version is otherwise an ordinary object, kept only when something reaches it).
  private Set<UUID> withOriginal(UUID id, Set<UUID> references) {
    String original = store.header(id).map(ObjectHeader::versionOf).orElse(null);
    if (original == null) {
      return references;
    }
    Set<UUID> all = new HashSet<>(references);
    all.add(UUID.fromString(original));
    return all;
  }

  private void forgetEndedSessions() {
    try {
      background.execute(() -> holdings.forgetEnded(sessions));
    } catch (RejectedExecutionException stopping) {
      // the backend is stopping: its holdings go with it
    }
  }

  private void requireOpen(Session caller, String rpc, long id) {
    requireCollector(caller, rpc, id);
    gate.readLock().lock();
    try {
      if (open != id) {
        throw new InvalidArgumentException("collection_id: collection " + id + " is not open on this backend ("
            + (open == 0 ? "none is" : "collection " + open + " is") + ")");
      }
    } finally {
      gate.readLock().unlock();
    }
  }

  private static void requireCollector(Session caller, String rpc, long id) {
    Permissions.requireBackend(caller, rpc + " (the Logic Module's garbage collector)");
    if (id <= 0) {
      throw new InvalidArgumentException("collection_id must be positive, got " + id);
    }
  }
}
