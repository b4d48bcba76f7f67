package io.dataclay.ds.collection;

import io.dataclay.ds.session.Session;
import io.dataclay.exceptions.NotAuthenticatedException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.logging.Logger;

/**
 * The objects each client session holds on this backend: those it made persistent here and those
 * it called or read here. While a session is open, garbage collection keeps what it holds. Kept
 * in DRAM only, within a budget of IDs over all sessions: a session that would pass it is marked
 * overflowed (its IDs are dropped), and until it ends this backend cannot take part in a
 * collection (so nothing it holds can be collected).
 */
final class SessionHoldings {
  private static final Logger LOG = Logger.getLogger(SessionHoldings.class.getName());

  /** What every session holds, and the sessions whose holdings passed the budget. */
  record Snapshot(Map<String, List<UUID>> held, List<String> overflowed) {}

  private static final class Holding {
    final long expiresAtMs;
    UuidSet ids = new UuidSet();
    boolean overflowed;
    boolean forgotten;

    Holding(long expiresAtMs) {
      this.expiresAtMs = expiresAtMs;
    }
  }

  private final ConcurrentHashMap<String, Holding> sessions = new ConcurrentHashMap<>();
  private final AtomicLong total = new AtomicLong();
  private final long budget;
  private final LongSupplier clock;

  /** Holdings of at most {@code budget} IDs over all sessions, expiring sessions on {@code clock} (epoch ms). */
  SessionHoldings(long budget, LongSupplier clock) {
    if (budget < 1) {
      throw new IllegalArgumentException("budget must be at least 1, got " + budget);
    }
    this.budget = budget;
    this.clock = clock;
  }

  /** Records that {@code session} holds {@code ids}. */
  void hold(Session session, Collection<UUID> ids) {
    while (true) {
      Holding h = sessions.get(session.token());
      if (h == null) {
        h = sessions.computeIfAbsent(session.token(), t -> new Holding(session.expiresAtMs()));
      }
      synchronized (h) {
        if (h.forgotten) {
          continue;
        }
        if (h.overflowed) {
          return;
        }
        for (UUID id : ids) {
          if (h.ids.add(id) && total.incrementAndGet() > budget) {
            overflow(session.username(), h);
            return;
          }
        }
        return;
      }
    }
  }

  /** Number of held IDs over all sessions. */
  long total() {
    return total.get();
  }

  /** A copy of every session's holdings. */
  Snapshot snapshot() {
    Map<String, List<UUID>> held = new HashMap<>();
    List<String> overflowed = new ArrayList<>();
    sessions.forEach((token, h) -> {
      synchronized (h) {
        if (h.forgotten) {
          return;
        }
        if (h.overflowed) {
          overflowed.add(token);
          return;
        }
        List<UUID> ids = new ArrayList<>(h.ids.size());
        h.ids.forEach(ids::add);
        held.put(token, ids);
      }
    });
    return new Snapshot(held, overflowed);
  }

  /**
   * Forgets the sessions that expired, and those {@code resolve} refuses with NOT_AUTHENTICATED
   * (closed). A session that cannot be checked now (the Logic Module does not answer) is kept.
   * Returns the number forgotten.
   */
  int forgetEnded(Function<String, Session> resolve) {
    int forgotten = 0;
    long now = clock.getAsLong();
    for (Map.Entry<String, Holding> e : sessions.entrySet()) {
      boolean ended = e.getValue().expiresAtMs <= now;
      if (!ended) {
        try {
          resolve.apply(e.getKey());
        } catch (NotAuthenticatedException closed) {
          ended = true;
        } catch (RuntimeException unreachable) {
          LOG.fine(() -> "could not check a session with the Logic Module: " + unreachable.getMessage());
        }
      }
      if (ended && forget(e.getKey(), e.getValue())) {
        forgotten++;
      }
    }
    return forgotten;
  }

  private boolean forget(String token, Holding h) {
    synchronized (h) {
      if (h.forgotten) {
        return false;
      }
      h.forgotten = true;
      total.addAndGet(-h.ids.size());
      h.ids = new UuidSet();
    }
    sessions.remove(token, h);
    return true;
  }

  private void overflow(String username, Holding h) {
    h.overflowed = true;
    total.addAndGet(-h.ids.size());
    h.ids = new UuidSet();
    LOG.warning("sessions hold more objects than this backend tracks (" + budget + " IDs): garbage collection is"
        + " suspended until the session of '" + username + "' that passed the budget ends");
  }
}
