package io.dataclay.logic.backends;

import io.dataclay.exceptions.BackendDoesNotExistException;
import io.dataclay.logic.accounts.CallerSession;
import io.dataclay.logic.checks.Checks;
import io.dataclay.logic.events.ClusterEvent;
import io.dataclay.logic.events.ClusterEvents;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.MetadataStore;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Registered backends (stored, and mirrored in memory for cheap lookups) and their liveness:
 * the time of each backend's last heartbeat, kept in memory only. After a restart of the Logic
 * Module a backend counts as alive again at its next heartbeat. A backend going silent and being
 * heard again are recorded in the cluster's events, once each time.
 */
public final class BackendRegistry {
  private final MetadataStore store;
  private final long timeoutMs;
  private final Clock clock;
  private final ClusterEvents events;
  private final Map<String, BackendRecord> backends = new ConcurrentHashMap<>();
  private final Map<String, Long> lastSeenMs = new ConcurrentHashMap<>();
  // the backends recorded as silent and not heard since (guarded by itself, with lastSeenMs' updates)
  private final Set<String> silent = new HashSet<>();
  private volatile long lastAnyMs;
  private volatile long hearingSinceMs;

  /**
   * Backends registered in {@code store}; one silent for {@code timeoutMs} is not live. Its going
   * silent and coming back are recorded in {@code events}.
   */
  public BackendRegistry(MetadataStore store, long timeoutMs, Clock clock, ClusterEvents events) {
    this.store = store;
    this.timeoutMs = timeoutMs;
    this.clock = clock;
    this.events = events;
    for (BackendRecord b : store.backends().all()) {
      backends.put(b.id(), b);
    }
    this.hearingSinceMs = clock.millis();
  }

  /** Registers a backend, or updates the address of one with the same ID; it counts as alive from now. */
  public synchronized void register(CallerSession caller, BackendRecord b) {
    caller.requireBackend("RegisterBackend");
    Checks.uuid("id", b.id());
    requireSelf(caller, "id", b.id(), "RegisterBackend");
    Checks.name("name", b.name());
    Checks.host("host", b.host());
    Checks.port("port", b.port());
    Checks.engine("store_engine", b.storeEngine());
    if (b.languages().isEmpty() || new HashSet<>(b.languages()).size() != b.languages().size()) {
      throw Checks.invalid("languages", "must list each execution-environment language once, at least one");
    }
    // database first: the memory mirror never holds a backend the database would not return;
    // synchronized so that two registrations of one ID leave both in the same order
    store.backends().upsert(b);
    backends.put(b.id(), b);
    heard(b.id(), clock.millis());
  }

  /** Records that the backend is alive now (that backend only). */
  public void heartbeat(CallerSession caller, String backendId) {
    caller.requireBackend("Heartbeat");
    requireRegistered("backend_id", backendId);
    requireSelf(caller, "backend_id", backendId, "Heartbeat");
    long now = clock.millis();
    if (now - lastAnyMs > timeoutMs) {
      hearingSinceMs = now; // nobody was heard for a while: this Logic Module was the one cut off
    }
    lastAnyMs = now;
    heard(backendId, now);
  }

  // A backend recorded as silent is recorded back at the first heartbeat (or registration) after.
  private void heard(String backendId, long now) {
    synchronized (silent) {
      Long last = lastSeenMs.put(backendId, now);
      if (silent.remove(backendId)) {
        events.record(ClusterEvent.BACKEND_BACK, backendId, 0, 0, nameOf(backendId) + ": heard again"
            + (last == null ? "" : " after " + (now - last) + " ms without a heartbeat"));
      }
    }
  }

  /**
   * Records each backend silent past the liveness timeout (counted as {@link #silentMs} counts)
   * that was not already recorded as silent; run every failover round. Its coming back is recorded
   * when it is heard again.
   */
  public void noteSilences() {
    for (String id : backends.keySet()) {
      synchronized (silent) {
        long quiet = silentMs(id);
        if (quiet > timeoutMs && silent.add(id)) {
          events.record(ClusterEvent.BACKEND_SILENT, id, 0, 0, nameOf(id) + ": no heartbeat for " + quiet + " ms");
        }
      }
    }
  }

  private String nameOf(String backendId) {
    BackendRecord b = backends.get(backendId);
    return b == null ? backendId : b.name();
  }

  /**
   * How long the Logic Module has not heard from a backend while it heard the others: since its
   * last heartbeat, or since the Logic Module started or came back from a time it heard nobody (so
   * that being cut off, or restarting, never makes every backend look lost at once).
   */
  public long silentMs(String backendId) {
    return clock.millis() - Math.max(lastSeenMs.getOrDefault(backendId, 0L), hearingSinceMs);
  }

  /** Every registered backend. */
  public List<BackendRecord> records() {
    return List.copyOf(backends.values());
  }

  /** The registered backend with this ID, or null. */
  public BackendRecord record(String backendId) {
    return backends.get(backendId);
  }

  /** The IDs of the backends that heartbeated within the liveness window. */
  public java.util.Set<String> aliveIds() {
    java.util.Set<String> out = new HashSet<>();
    for (String id : backends.keySet()) {
      if (isAlive(id)) {
        out.add(id);
      }
    }
    return out;
  }

  /** Every registered backend with its liveness, by name then ID. */
  public List<RegisteredBackend> all() {
    List<RegisteredBackend> out = new ArrayList<>();
    for (BackendRecord b : backends.values()) {
      out.add(new RegisteredBackend(b, isAlive(b.id())));
    }
    out.sort(Comparator.comparing((RegisteredBackend r) -> r.backend().name()).thenComparing(r -> r.backend().id()));
    return out;
  }

  /** The backends that heartbeated within the liveness window. */
  public List<BackendRecord> alive() {
    List<BackendRecord> out = new ArrayList<>();
    for (RegisteredBackend r : all()) {
      if (r.alive()) {
        out.add(r.backend());
      }
    }
    return out;
  }

  /** Fails with BACKEND_DOES_NOT_EXIST (naming {@code field}) unless the ID is registered. */
  public void requireRegistered(String field, String backendId) {
    Checks.uuid(field, backendId);
    if (!backends.containsKey(backendId)) {
      throw new BackendDoesNotExistException(field + ": backend " + backendId + " is not registered");
    }
  }

  // A backend speaks for itself only: its session was opened for its ID.
  private static void requireSelf(CallerSession caller, String field, String backendId, String rpc) {
    if (!backendId.equals(caller.backendId())) {
      throw new io.dataclay.exceptions.PermissionDeniedException(field + ": a backend may send " + rpc
          + " for itself only (its session is backend " + caller.backendId() + ", not " + backendId + ")");
    }
  }

  private boolean isAlive(String backendId) {
    Long seen = lastSeenMs.get(backendId);
    return seen != null && clock.millis() - seen <= timeoutMs;
  }
}
