package io.dataclay.logic.accounts;

import io.dataclay.exceptions.QuotaExceededException;
import io.dataclay.server.LruMap;
import java.util.function.LongSupplier;

/**
 * Caps one account's sessions: at most {@code maxOpen} open at once (closed and expired ones do not
 * count) and new ones at {@code perSecond} on average, with bursts of {@code burst} (a token bucket
 * per account). Administrators are held to it too: a script that leaks sessions under an
 * administrator's name fills the metadata database as surely as anyone else's. Backend and system
 * sessions are not charged (they are the cluster's own, opened once per start).
 */
final class SessionQuota {
  // names of the settings, for the messages (LogicModuleConfig holds the same strings)
  static final String MAX_OPEN_KEY = "DATACLAY_MAX_SESSIONS_PER_ACCOUNT";
  static final String RATE_KEY = "DATACLAY_SESSIONS_PER_SECOND";
  private static final int MAX_ACCOUNTS = 50_000;

  private static final class Bucket {
    double tokens;
    long atMs;
  }

  private final SessionLimits limits;
  private final LongSupplier clock;
  // least recently used accounts are dropped first: a forgotten bucket is a full one, which only helps its account
  private final LruMap<String, Bucket> buckets = new LruMap<>(MAX_ACCOUNTS);

  SessionQuota(SessionLimits limits, LongSupplier clock) {
    this.limits = limits;
    this.clock = clock;
  }

  /**
   * Takes one new session of {@code username}, which has {@code open} sessions open now. The caller
   * holds this object's lock from counting until the new session is stored, so two log-ins cannot
   * both take the last place.
   *
   * @throws QuotaExceededException naming the limit, the use and the setting; nothing is charged
   */
  void admit(String username, long open) {
    if (open >= limits.maxOpen()) {
      throw new QuotaExceededException("account '" + username + "' has " + open + " open sessions, the most "
          + MAX_OPEN_KEY + " allows (" + limits.maxOpen() + "): close sessions you no longer use (api.finish(),"
          + " CloseSession) or wait for them to expire");
    }
    long now = clock.getAsLong();
    Bucket b = buckets.computeIfAbsent(username, k -> {
      Bucket fresh = new Bucket();
      fresh.tokens = limits.burst();
      fresh.atMs = now;
      return fresh;
    });
    b.tokens = Math.min(limits.burst(), b.tokens + Math.max(0, now - b.atMs) * limits.perSecond() / 1000.0);
    b.atMs = now;
    if (b.tokens < 1) {
      long waitMs = (long) Math.ceil((1 - b.tokens) * 1000.0 / limits.perSecond());
      throw new QuotaExceededException("account '" + username + "' opened " + limits.burst() + " sessions faster than "
          + RATE_KEY + " allows (" + limits.perSecond() + " a second, bursts of " + limits.burst()
          + "): try again in " + waitMs + " ms, or reuse one session");
    }
    b.tokens -= 1;
  }
}
