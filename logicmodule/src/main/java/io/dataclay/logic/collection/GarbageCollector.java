package io.dataclay.logic.collection;

import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.NotAuthenticatedException;
import io.dataclay.logic.accounts.AccountService;
import io.dataclay.logic.backends.BackendCalls;
import io.dataclay.logic.backends.BackendRegistry;
import io.dataclay.logic.backends.RecordedRoots;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.MetadataStore;
import io.dataclay.logic.snapshot.SnapshotIndex;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Runs garbage collections, one at a time (docs/internals.md "Garbage collection"). A collection
 * removes the registered objects that no alias, no open session and no reachable object reaches;
 * when any backend that matters does not take part, it removes nothing.
 */
public final class GarbageCollector {
  private static final Logger LOG = Logger.getLogger(GarbageCollector.class.getName());
  private static final int BATCH = 10_000;

  private final MetadataStore store;
  private final AccountService accounts;
  private final BackendRegistry backends;
  private final BackendCalls calls;
  private final Supplier<String> systemToken;
  // increasing across restarts too, so a backend never confuses a new collection with an old one
  private final AtomicLong nextId = new AtomicLong(System.currentTimeMillis());
  private final AtomicLong collectedTotal = new AtomicLong();

  /** A collector of the objects in {@code store}, asking the backends through {@code calls}. */
  public GarbageCollector(MetadataStore store, AccountService accounts, BackendRegistry backends, BackendCalls calls,
      Supplier<String> systemToken) {
    this.store = store;
    this.accounts = accounts;
    this.backends = backends;
    this.calls = calls;
    this.systemToken = systemToken;
  }

  /** Objects removed by the collections of this process. */
  public long collectedTotal() {
    return collectedTotal.get();
  }

  /**
   * Runs one collection now (after the one in progress, if any).
   *
   * @throws BackendUnavailableException when the collection was abandoned before removing
   *     anything (a backend holding objects is down, or a backend failed a step); the message says why
   */
  public synchronized CollectionResult collect() {
    long started = System.nanoTime();
    long id = nextId.incrementAndGet();
    String token = systemToken.get();
    List<BackendRecord> live = backends.alive();
    Set<String> liveIds = idsOf(live);
    for (String holder : store.objects().backendsHoldingObjects()) {
      if (!liveIds.contains(holder)) {
        throw abandoned(id, "backend " + holder + " holds objects but is not alive: what they reference is unknown");
      }
    }
    List<BackendRecord> begun = new ArrayList<>();
    SnapshotIndex snapshot = new SnapshotIndex();
    BitSet reachable;
    try {
      for (BackendRecord b : live) {
        step(id, "BeginCollection", b, () -> {
          calls.beginCollection(b, id, token);
          return null;
        });
        begun.add(b);
      }
      // The snapshot comes after every backend records: an object registered from now on is not
      // collected by this collection, and one in the snapshot that becomes referenced or held
      // from now on is recorded by its backend.
      store.objects().forEachObject(snapshot::add);
      snapshot.seal();
      // A version is an ordinary object here: kept only if something reaches it. Its backend reports
      // the original it would consolidate into as one of its references, so a live version keeps it.
      ReferenceGraph graph = new ReferenceGraph(snapshot);
      store.objects().aliasedObjectIds().forEach(graph::root);
      for (BackendRecord b : live) {
        step(id, "GetReferences", b, () -> {
          calls.getReferences(b, id, token, graph::reported);
          return null;
        });
      }
      Map<String, Boolean> open = new HashMap<>();
      for (BackendRecord b : live) {
        begun.remove(b);
        RecordedRoots recorded = step(id, "EndCollection", b, () -> calls.endCollection(b, id, token));
        recorded.referenced().forEach(graph::root);
        recorded.heldBySession().forEach((session, held) -> {
          if (open.computeIfAbsent(session, this::isOpen)) {
            held.forEach(graph::root);
          }
        });
      }
      // aliases created while the references were read are roots too
      store.objects().aliasedObjectIds().forEach(graph::root);
      String changed = backendsChanged(liveIds);
      if (changed != null) {
        throw abandoned(id, changed);
      }
      reachable = graph.mark();
      String moved = reachableButUnreported(snapshot, graph, reachable);
      if (moved != null) {
        throw abandoned(id, moved);
      }
    } catch (DataClayException e) {
      stopRecording(begun, id, token);
      throw e instanceof Abandoned ? e : abandoned(id, e.getMessage());
    }
    List<String> garbage = new ArrayList<>();
    for (int i = reachable.nextClearBit(0); i < snapshot.size(); i = reachable.nextClearBit(i + 1)) {
      garbage.add(snapshot.id(i));
    }
    long collected = remove(garbage, token);
    collectedTotal.addAndGet(collected);
    CollectionResult result = new CollectionResult(collected, snapshot.size(), (System.nanoTime() - started) / 1_000_000);
    LOG.log(collected > 0 ? Level.INFO : Level.FINE, () -> "garbage collection " + id + ": " + collected + " of "
        + result.examined() + " objects collected in " + result.durationMs() + " ms");
    return result;
  }

  private static <T> T step(long id, String rpc, BackendRecord b, Supplier<T> call) {
    try {
      return call.get();
    } catch (DataClayException e) {
      throw abandoned(id, rpc + " failed on backend " + b.name() + " (" + b.id() + "): " + e.getMessage());
    }
  }

  private boolean isOpen(String sessionToken) {
    try {
      accounts.authenticate(sessionToken);
      return true;
    } catch (NotAuthenticatedException closedOrExpired) {
      return false;
    }
  }

  // A backend that came up (or back) during the collection did not record what its clients did.
  private String backendsChanged(Set<String> begun) {
    for (BackendRecord b : backends.alive()) {
      if (!begun.contains(b.id())) {
        return "backend " + b.name() + " (" + b.id() + ") came up during the collection";
      }
    }
    return null;
  }

  // A reachable object no backend reported has unknown references. Harmless when it is simply
  // lost (a memory-engine backend restarted); but if it moved during the collection, its
  // references were read nowhere, so the collection gives up.
  private String reachableButUnreported(SnapshotIndex snapshot, ReferenceGraph graph, BitSet reachable) {
    List<Integer> unreported = new ArrayList<>();
    for (int i = reachable.nextSetBit(0); i >= 0; i = reachable.nextSetBit(i + 1)) {
      if (!graph.wasReported(i)) {
        unreported.add(i);
      }
    }
    if (unreported.isEmpty()) {
      return null;
    }
    List<String> ids = new ArrayList<>(unreported.size());
    unreported.forEach(i -> ids.add(snapshot.id(i)));
    Map<String, List<String>> now = store.objects().locations(ids);
    for (int i : unreported) {
      List<String> holders = now.get(snapshot.id(i));
      if (holders != null && !holders.get(0).equals(snapshot.masterAtSnapshot(i))) {
        return "object " + snapshot.id(i) + " moved while its references were being read";
      }
    }
    return null;
  }

  // Crash note: objects are removed from their backends first and from the metadata after. A
  // crash in between leaves metadata naming objects no backend holds; nothing can reach them,
  // so the next collection finds them unreachable again and removes the rows.
  private long remove(List<String> garbage, String token) {
    Map<String, BackendRecord> live = new HashMap<>();
    backends.alive().forEach(b -> live.put(b.id(), b));
    long removed = 0;
    for (int from = 0; from < garbage.size(); from += BATCH) {
      List<String> batch = garbage.subList(from, Math.min(garbage.size(), from + BATCH));
      Map<String, List<String>> where = store.objects().locations(batch);
      Map<String, List<String>> byBackend = new HashMap<>();
      Set<String> kept = new HashSet<>();
      where.forEach((oid, holders) -> {
        for (String backend : holders) {
          if (live.containsKey(backend)) {
            byBackend.computeIfAbsent(backend, k -> new ArrayList<>()).add(oid);
          } else {
            kept.add(oid);
          }
        }
      });
      byBackend.forEach((backend, ids) -> {
        try {
          calls.deleteObjects(live.get(backend), ids, token);
        } catch (DataClayException e) {
          LOG.warning("could not remove " + ids.size() + " collected objects from backend " + backend
              + " (the next collection retries): " + e.getMessage());
          kept.addAll(ids);
        }
      });
      List<String> gone = new ArrayList<>();
      for (String oid : where.keySet()) {
        if (!kept.contains(oid)) {
          gone.add(oid);
        }
      }
      if (!gone.isEmpty()) {
        store.objects().removeObjects(gone);
      }
      removed += gone.size();
    }
    return removed;
  }

  private void stopRecording(List<BackendRecord> begun, long id, String token) {
    for (BackendRecord b : begun) {
      try {
        calls.endCollection(b, id, token);
      } catch (DataClayException e) {
        LOG.fine(() -> "backend " + b.name() + " did not end collection " + id + ": " + e.getMessage());
      }
    }
  }

  private static Abandoned abandoned(long id, String why) {
    LOG.warning("garbage collection " + id + " abandoned, nothing collected: " + why);
    return new Abandoned("garbage collection " + id + " abandoned, nothing collected: " + why);
  }

  /** A collection that stopped before removing anything. */
  private static final class Abandoned extends BackendUnavailableException {
    Abandoned(String message) {
      super(message);
    }
  }

  private static Set<String> idsOf(List<BackendRecord> list) {
    Set<String> ids = new HashSet<>();
    list.forEach(b -> ids.add(b.id()));
    return ids;
  }
}
