package io.dataclay.server;

import io.dataclay.exceptions.NotAuthenticatedException;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Slows down guessing: counts failures per key (an account, a peer address) within a window; a
 * key that reaches the limit is refused without any check for a cool-down that doubles with every
 * further trip (up to a maximum). A success forgets the key. Memory is bounded: the least recently
 * failing keys are dropped first.
 */
public final class FailureThrottle {
  private static final int MAX_KEYS = 50_000;

  private static final class State {
    int failures;
    long windowStartMs;
    long blockedUntilMs;
    int trips;
  }

  private final String what;
  private final int limit;
  private final long windowMs;
  private final long firstCooldownMs;
  private final long maxCooldownMs;
  private final LongSupplier clock;
  private final LruMap<String, State> states = new LruMap<>(MAX_KEYS);

  /**
   * A throttle of {@code what} (for messages): {@code limit} failures within {@code window} block
   * the key for {@code firstCooldown}, doubled on each further trip up to {@code maxCooldown}.
   */
  public FailureThrottle(String what, int limit, Duration window, Duration firstCooldown, Duration maxCooldown,
      LongSupplier clock) {
    this.what = what;
    this.limit = limit;
    this.windowMs = window.toMillis();
    this.firstCooldownMs = firstCooldown.toMillis();
    this.maxCooldownMs = maxCooldown.toMillis();
    this.clock = clock;
  }

  /**
   * Returns normally unless {@code key} is cooling down.
   *
   * @throws NotAuthenticatedException naming the key and how long to wait
   */
  public synchronized void check(String key) {
    State s = states.get(key);
    long now = clock.getAsLong();
    if (s != null && s.blockedUntilMs > now) {
      long seconds = (s.blockedUntilMs - now + 999) / 1000;
      throw new NotAuthenticatedException("too many failed attempts " + what + " '" + key + "': try again in "
          + seconds + " s");
    }
  }

  /** Counts a failure of {@code key}. */
  public synchronized void failed(String key) {
    long now = clock.getAsLong();
    State s = states.computeIfAbsent(key, k -> new State());
    if (now - s.windowStartMs > windowMs) {
      s.windowStartMs = now;
      s.failures = 0;
    }
    if (++s.failures >= limit) {
      long cooldown = Math.min(maxCooldownMs, firstCooldownMs << Math.min(s.trips, 20));
      s.blockedUntilMs = now + cooldown;
      s.trips++;
      s.failures = 0;
      s.windowStartMs = now;
    }
  }

  /** Forgets {@code key}'s failures (it succeeded). */
  public synchronized void succeeded(String key) {
    states.remove(key);
  }
}
