package io.dataclay.ds.snapshot;

import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.BackendUnavailableException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One snapshot's cut on this backend: the state of every object as it was when the write gate
 * closed, kept by copy-on-write until the export has passed the object (docs/internals.md
 * "Snapshots").
 *
 * <p>Writers call {@link #beforeWrite} (inside the write gate, before the write reaches the
 * store) for each object they change, create or remove. The exporter walks the objects in ID order
 * ({@link #exportOrder}, then {@link #take} for each); everything at or below its cursor has been
 * exported. A writer on an object the exporter has not passed keeps the object's state first
 * (once): the exporter then exports that state instead of the store's. Both sides decide under the
 * object's stripe lock, so for each object either the exporter reads it before any change after
 * the cut, or it reads the state kept before that change.
 *
 * <p>Memory: each kept state costs its values plus about {@link #ENTRY_BYTES}; past the budget the
 * cut fails (the export stops with an error, writers never do) and what it kept is dropped.
 */
final class SnapshotCut {
  /** Estimated bookkeeping bytes per kept entry (map node, UUID, record). */
  static final long ENTRY_BYTES = 96;
  // not exported from here: created after the cut, a replica, or of another dataset
  private static final Object SKIP = new Object();
  private static final int STRIPES = 256;

  private final String id;
  private final String dataset;
  private final long budgetBytes;
  private final Set<UUID> stagedAtCut;
  private final ConcurrentHashMap<UUID, Object> kept = new ConcurrentHashMap<>();
  private final Object[] stripes = new Object[STRIPES];
  private final AtomicLong keptBytes = new AtomicLong();
  // the last object the exporter took (null: none yet); every object at or below it is done
  private volatile UUID cursor;
  private volatile String failure;
  private volatile boolean finished;

  /**
   * The cut of snapshot {@code id} (only {@code dataset}'s objects when not null), keeping at most
   * {@code budgetBytes}; objects staged by unfinished imports at the cut ({@code stagedAtCut}) are left out.
   */
  SnapshotCut(String id, String dataset, long budgetBytes, Set<UUID> stagedAtCut) {
    this.id = id;
    this.dataset = dataset;
    this.budgetBytes = budgetBytes;
    this.stagedAtCut = Set.copyOf(stagedAtCut);
    for (int i = 0; i < STRIPES; i++) {
      stripes[i] = new Object();
    }
  }

  /** The snapshot's ID. */
  String id() {
    return id;
  }

  /** Keeps object {@code oid}'s state as of the cut, unless it is kept already or exported. */
  void beforeWrite(UUID oid, ObjectStore inner) {
    if (finished || failure != null) {
      return;
    }
    synchronized (stripe(oid)) {
      if (finished || failure != null || passed(oid) || kept.containsKey(oid)) {
        return;
      }
      Optional<ObjectHeader> header = inner.header(oid);
      Optional<StoredObject> state = header.isPresent() && exported(header.get()) ? inner.get(oid) : Optional.empty();
      if (state.isPresent()) {
        kept.put(oid, state.get());
        charge(ENTRY_BYTES + state.get().valueBytes());
      } else {
        // created after the cut (nothing stored yet), or not ours to export: remember not to read it
        kept.put(oid, SKIP);
        charge(ENTRY_BYTES);
      }
    }
  }

  /**
   * The order the export takes: every object stored now and every kept state, sorted, each once.
   * An object stored at the cut is either still stored or was kept when it was removed (removals
   * pass {@link #beforeWrite} too), so none is missed; objects created since are skipped by {@link #take}.
   */
  List<UUID> exportOrder(ObjectStore inner) {
    List<UUID> ids = new ArrayList<>();
    inner.forEachId(ids::add);
    kept.forEach((oid, state) -> {
      if (state != SKIP) {
        ids.add(oid);
      }
    });
    Collections.sort(ids);
    List<UUID> unique = new ArrayList<>(ids.size());
    UUID last = null;
    for (UUID oid : ids) {
      if (!oid.equals(last)) {
        unique.add(oid);
        last = oid;
      }
    }
    return unique;
  }

  /**
   * The state of {@code oid} as of the cut when this backend exports it (a master copy of the
   * snapshot's dataset), else null; moves the cursor past it. Call in {@link #exportOrder} order.
   *
   * @throws BackendUnavailableException when the cut failed (its budget was exceeded)
   */
  StoredObject take(UUID oid, ObjectStore inner) {
    requireIntact();
    if (stagedAtCut.contains(oid)) {
      return null;
    }
    StoredObject state;
    synchronized (stripe(oid)) {
      Object k = kept.remove(oid);
      if (k instanceof StoredObject s) {
        keptBytes.addAndGet(-(ENTRY_BYTES + s.valueBytes()));
        state = s;
      } else if (k == SKIP) {
        keptBytes.addAndGet(-ENTRY_BYTES);
        state = null;
      } else {
        // no write since the cut has touched it (a writer keeps the state first, under this lock)
        state = inner.get(oid).orElse(null);
      }
      cursor = oid;
    }
    requireIntact();
    return state != null && exported(state.header()) ? state : null;
  }

  /** Stops keeping states (the export ended, or was given up) and drops those kept. */
  void finish() {
    finished = true;
    kept.clear();
    keptBytes.set(0);
  }

  /** Bytes of states kept right now (estimated), for tests and logs. */
  long keptBytes() {
    return keptBytes.get();
  }

  private boolean passed(UUID oid) {
    UUID at = cursor;
    return at != null && oid.compareTo(at) <= 0;
  }

  private boolean exported(ObjectHeader h) {
    return h.masterBackendId() == null && (dataset == null || dataset.equals(h.dataset()));
  }

  private void charge(long bytes) {
    if (keptBytes.addAndGet(bytes) > budgetBytes && failure == null) {
      failure = "objects changed after the cut of snapshot " + id + " and not yet exported came to more than "
          + (budgetBytes >> 20) + " MiB of kept states on this backend: the export was given up (export when fewer"
          + " writes run, or give the backend more heap)";
      kept.clear();
      keptBytes.set(0);
    }
  }

  private void requireIntact() {
    String why = failure;
    if (why != null) {
      throw new BackendUnavailableException(why);
    }
    if (finished) {
      throw new BackendUnavailableException("snapshot " + id + " ended on this backend before its export did");
    }
  }

  private Object stripe(UUID oid) {
    return stripes[(int) ((oid.getLeastSignificantBits() ^ oid.getMostSignificantBits()) & (STRIPES - 1))];
  }
}
