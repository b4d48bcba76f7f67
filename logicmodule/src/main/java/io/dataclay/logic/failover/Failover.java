package io.dataclay.logic.failover;

import io.dataclay.logic.backends.BackendCalls;
import io.dataclay.logic.backends.BackendRegistry;
import io.dataclay.logic.events.ClusterEvent;
import io.dataclay.logic.events.ClusterEvents;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.FailoverStore.Move;
import io.dataclay.logic.metadata.MetadataStore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * Keeps writes going when a backend holding master copies is lost. Once a backend has sent no
 * heartbeat for {@code promoteAfterMs} (counted while the Logic Module hears the others, see
 * {@link BackendRegistry#silentMs}), one live replica of each of its replicated objects becomes the
 * master, its term rises, and the new master is told ({@code PromoteReplicas}); it brings the other
 * replicas to its state before it writes.
 *
 * <p>Why two masters never accept writes for one object: a master acts as one only while its
 * lease lasts, a time from the sending of its last answered heartbeat that is shorter than {@code
 * promoteAfterMs}, which the Logic Module counts from the arrival of that heartbeat, later. And a
 * change it passes on is refused by the promoted replica (which now holds the master copy) and by
 * every replica that learnt the new term, and the Logic Module refuses to drop those replicas for
 * it; so a stale master's change is never acknowledged. When the old master is heard again, its
 * heartbeat answers carry its demotions: it drops its stale copies before it renews its lease, then
 * the new masters give it fresh replicas.
 *
 * <p>Its rounds also watch the backends' liveness ({@link BackendRegistry#noteSilences}), promotion
 * on or off; promotions and replicas given back are recorded in the cluster's events too.
 */
public final class Failover implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(Failover.class.getName());
  private static final int BATCH = 10_000;
  private static final int DEMOTIONS_PER_HEARTBEAT = 10_000;
  private static final long LIVENESS_ROUND_MS = 1000;

  private final MetadataStore store;
  private final BackendRegistry backends;
  private final BackendCalls calls;
  private final Supplier<String> systemToken;
  private final long promoteAfterMs;
  private final long leaseMs;
  private final ClusterEvents events;
  private final Set<String> demoted = ConcurrentHashMap.newKeySet(); // backends with demotions to apply
  private final ExecutorService rejoins = Executors.newSingleThreadExecutor(r -> daemon(r, "lm-failover-rejoin"));
  private final ScheduledExecutorService rounds =
      Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "lm-failover"));
  private final Map<String, Integer> strandedLogged = new ConcurrentHashMap<>();
  private volatile Map<String, Long> terms;
  private final LongAdder promoted = new LongAdder();
  private final LongAdder restored = new LongAdder();

  /** What a heartbeat answer carries for failover. */
  public record HeartbeatPart(Map<String, Long> terms, long leaseMs, List<Move> demotions, boolean more) {}

  /**
   * Failover over the backends of {@code backends}, telling them through {@code calls}; promotes
   * after {@code promoteAfterMs} of silence (0: never) and records what it did in {@code events}.
   */
  public Failover(MetadataStore store, BackendRegistry backends, BackendCalls calls, Supplier<String> systemToken,
      long promoteAfterMs, ClusterEvents events) {
    this.store = store;
    this.events = events;
    this.backends = backends;
    this.calls = calls;
    this.systemToken = systemToken;
    this.promoteAfterMs = promoteAfterMs;
    // the margin covers the heartbeat's own trip and scheduling delays on both sides
    this.leaseMs = promoteAfterMs == 0 ? 0 : promoteAfterMs - Math.max(1000, promoteAfterMs / 4);
    this.terms = Map.copyOf(store.failover().terms());
    for (BackendRecord b : backends.records()) {
      if (!store.failover().demotions(b.id(), 1).isEmpty()) {
        demoted.add(b.id());
      }
    }
  }

  /** Objects whose replica was promoted to master since the Logic Module started. */
  public long promotedObjects() {
    return promoted.sum();
  }

  /** Replicas given back to a backend that rejoined after failover, since the Logic Module started. */
  public long restoredReplicas() {
    return restored.sum();
  }

  /** The highest failover term of any backend (0 until a first promotion). */
  public long highestTerm() {
    return terms.values().stream().mapToLong(Long::longValue).max().orElse(0);
  }

  /** Notes that {@code backendId} has demotions to apply (a master dropped replicas of it). */
  public void demoted(String backendId) {
    demoted.add(backendId);
  }

  /**
   * The failover part of {@code backendId}'s heartbeat answer; {@code applied} are the demotions it
   * applied since its last one, which are forgotten, and for which the new masters give it replicas.
   */
  public HeartbeatPart heartbeat(String backendId, List<String> applied) {
    if (!applied.isEmpty()) {
      List<Move> rejoin = store.failover().applied(backendId, applied);
      submit(() -> replicateTo(backendId, rejoin));
    }
    List<Move> demotions = List.of();
    boolean more = false;
    if (demoted.contains(backendId)) {
      demotions = store.failover().demotions(backendId, DEMOTIONS_PER_HEARTBEAT + 1);
      more = demotions.size() > DEMOTIONS_PER_HEARTBEAT;
      if (more) {
        demotions = demotions.subList(0, DEMOTIONS_PER_HEARTBEAT);
      } else if (demotions.isEmpty()) {
        demoted.remove(backendId);
      }
    }
    return new HeartbeatPart(terms, leaseMs, demotions, more);
  }

  /**
   * One round: records the backends newly silent, promotes replicas of every backend silent for
   * longer than the grace period, and tells new masters the promotions they have not confirmed yet.
   * Run periodically; never throws.
   */
  public void tick() {
    try {
      backends.noteSilences();
      if (promoteAfterMs == 0) {
        return;
      }
      for (BackendRecord b : backends.records()) {
        if (backends.silentMs(b.id()) >= promoteAfterMs) {
          promoteFrom(b);
        }
      }
      announcePending();
    } catch (RuntimeException e) {
      LOG.warning("failover round failed (the next one tries again): " + e.getMessage());
    }
  }

  private void promoteFrom(BackendRecord lost) {
    Map<String, List<String>> replicated = store.failover().replicasOfMastersOn(lost.id());
    if (replicated.isEmpty()) {
      return;
    }
    Set<String> live = backends.aliveIds();
    Map<String, Integer> load = new HashMap<>();
    Map<String, String> chosen = new LinkedHashMap<>();
    int stranded = 0;
    for (Map.Entry<String, List<String>> o : replicated.entrySet()) {
      String best = null;
      for (String r : o.getValue()) {
        if (live.contains(r) && (best == null || load.getOrDefault(r, 0) < load.getOrDefault(best, 0))) {
          best = r;
        }
      }
      if (best == null) {
        stranded++;
        continue;
      }
      load.merge(best, 1, Integer::sum);
      chosen.put(o.getKey(), best);
      if (chosen.size() == BATCH) {
        record(lost, chosen);
        chosen.clear();
      }
    }
    if (!chosen.isEmpty()) {
      record(lost, chosen);
    }
    if (stranded > 0 && !Integer.valueOf(stranded).equals(strandedLogged.put(lost.id(), stranded))) {
      LOG.warning("backend " + lost.name() + " (" + lost.id() + ") is silent: " + stranded + " of its replicated"
          + " objects have no live replica to promote; they stay unavailable until a copy comes back");
    }
  }

  private void record(BackendRecord lost, Map<String, String> chosen) {
    List<Move> done = store.failover().promote(lost.id(), chosen);
    if (done.isEmpty()) {
      return;
    }
    terms = Map.copyOf(store.failover().terms());
    promoted.add(done.size());
    demoted.add(lost.id());
    announceTerms();
    Map<String, Integer> per = new HashMap<>();
    done.forEach(m -> per.merge(m.backendId(), 1, Integer::sum));
    long term = terms.getOrDefault(lost.id(), 0L);
    long silentMs = backends.silentMs(lost.id());
    events.record(ClusterEvent.PROMOTED, lost.id(), done.size(), term, lost.name() + ": silent for " + silentMs
        + " ms, replicas promoted on " + per.size() + " backends");
    LOG.warning("backend " + lost.name() + " (" + lost.id() + ") silent for " + silentMs
        + " ms: promoted replicas of " + done.size() + " objects to master (new masters and counts: " + per
        + "); its term is now " + term);
  }

  private void announcePending() {
    Map<String, List<String>> byBackend = new LinkedHashMap<>();
    for (Move p : store.failover().pendingPromotions()) {
      byBackend.computeIfAbsent(p.backendId(), k -> new ArrayList<>()).add(p.objectId());
    }
    Set<String> live = backends.aliveIds();
    for (Map.Entry<String, List<String>> e : byBackend.entrySet()) {
      BackendRecord to = backends.record(e.getKey());
      if (to == null || !live.contains(to.id())) {
        continue; // told once it is back (or promoted away from in turn)
      }
      for (int i = 0; i < e.getValue().size(); i += BATCH) {
        List<String> ids = e.getValue().subList(i, Math.min(e.getValue().size(), i + BATCH));
        Map<String, List<String>> followers = new LinkedHashMap<>();
        for (String id : ids) {
          followers.put(id, store.failover().replicasOf(id));
        }
        try {
          calls.promoteReplicas(to, followers, terms, systemToken.get());
          store.failover().confirmPromotions(to.id(), ids);
        } catch (RuntimeException failed) {
          LOG.warning("backend " + to.name() + " did not take its promotion to master of " + ids.size()
              + " objects (told again next round): " + failed.getMessage());
          break;
        }
      }
    }
  }

  // Before a new master brings the other replicas to its state, every live backend learns the old
  // master's new term, so that a change the old master sent before it was cut off, arriving late,
  // is refused by all of them (a backend that misses this learns it at its next heartbeat, and one
  // the new master cannot reach is dropped from the replicas).
  private void announceTerms() {
    for (String id : backends.aliveIds()) {
      BackendRecord b = backends.record(id);
      try {
        calls.promoteReplicas(b, Map.of(), terms, systemToken.get());
      } catch (RuntimeException e) {
        LOG.fine(() -> "backend " + b.name() + " did not take the new terms (its next heartbeat brings them): "
            + e.getMessage());
      }
    }
  }

  private void replicateTo(String backendId, List<Move> rejoin) {
    Map<String, List<String>> byMaster = new LinkedHashMap<>();
    rejoin.forEach(m -> byMaster.computeIfAbsent(m.backendId(), k -> new ArrayList<>()).add(m.objectId()));
    long given = 0;
    List<String> givers = new ArrayList<>();
    for (Map.Entry<String, List<String>> e : byMaster.entrySet()) {
      BackendRecord master = backends.record(e.getKey());
      if (master == null || e.getKey().equals(backendId)) {
        continue;
      }
      try {
        calls.newReplicas(master, e.getValue(), backendId, systemToken.get());
        restored.add(e.getValue().size());
        given += e.getValue().size();
        givers.add(master.name());
        LOG.info("backend " + backendId + " rejoined as a replica of " + e.getValue().size() + " objects mastered on "
            + master.name());
      } catch (RuntimeException failed) {
        // Tried again after its next heartbeat: the demotions go back, the backend (holding no copy
        // of them now) acknowledges them at once, and this runs again, with the masters of then.
        store.failover().redemote(backendId, e.getValue(), e.getKey());
        demoted.add(backendId);
        LOG.warning("backend " + backendId + " dropped " + e.getValue().size() + " stale copies, but " + master.name()
            + " could not replicate them to it yet (trying again after its next heartbeat): " + failed.getMessage());
      }
    }
    if (given > 0) {
      // the objects were the rejoining backend's before they were promoted away from it
      BackendRecord rejoined = backends.record(backendId);
      events.record(ClusterEvent.REPLICAS_RESTORED, backendId, given, 0, (rejoined == null ? backendId
          : rejoined.name()) + ": rejoined as a replica, copies from " + String.join(", ", givers));
    }
  }

  private void submit(Runnable work) {
    try {
      rejoins.execute(work);
    } catch (RejectedExecutionException closed) {
      // shutting down: the backend simply stays without those replicas
    }
  }

  /**
   * Runs {@link #tick()} every eighth of the grace period (at least every 100 ms); when promotion
   * is off, every second, to watch liveness only.
   */
  public void start() {
    long every = promoteAfterMs > 0 ? Math.max(100, promoteAfterMs / 8) : LIVENESS_ROUND_MS;
    rounds.scheduleWithFixedDelay(this::tick, every, every, TimeUnit.MILLISECONDS);
  }

  /** Stops promoting and re-replicating. */
  @Override
  public void close() {
    rounds.shutdownNow();
    rejoins.shutdownNow();
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
