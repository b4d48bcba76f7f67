package io.dataclay.ds.service;

import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.NotAuthenticatedException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Client sessions, validated once with the Logic Module and then served from memory until
 * min(session expiry, validation + 60 s). A hit is one map lookup; concurrent first uses of a
 * token share one Logic Module call. Refused tokens are not remembered.
 */
public final class SessionCache {
  /** How long a validated session is trusted without asking the Logic Module again. */
  public static final long TRUST_MS = 60_000;
  private static final int PURGE_ABOVE = 4096;

  private final LogicModuleGateway lm;
  private final LongSupplier clock;
  private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

  private record Entry(CompletableFuture<Session> session, long validUntilMs) {
    boolean fresh(long now) {
      return now < validUntilMs;
    }
  }

  /** A cache that validates through {@code lm}, on the wall clock. */
  public SessionCache(LogicModuleGateway lm) {
    this(lm, System::currentTimeMillis);
  }

  /** A cache on a given clock (epoch milliseconds). */
  public SessionCache(LogicModuleGateway lm, LongSupplier clock) {
    this.lm = Objects.requireNonNull(lm, "lm");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * The session of {@code token}.
   *
   * @throws NotAuthenticatedException when the token is missing, unknown, closed or expired
   */
  public Session resolve(String token) {
    if (token == null || token.isEmpty()) {
      throw new NotAuthenticatedException("the call carries no session token (metadata dataclay-session)");
    }
    long now = clock.getAsLong();
    Entry entry = entries.get(token);
    if (entry == null || !entry.fresh(now)) {
      entry = validate(token, now);
    }
    Session session = join(token, entry);
    if (session.expiresAtMs() <= clock.getAsLong()) {
      entries.remove(token, entry);
      throw new NotAuthenticatedException("the session has expired");
    }
    return session;
  }

  /**
   * The session of {@code token} when it is validated, fresh and unexpired in memory; null
   * otherwise. Never calls the Logic Module.
   */
  public Session cached(String token) {
    if (token == null) {
      return null;
    }
    Entry entry = entries.get(token);
    long now = clock.getAsLong();
    if (entry == null || !entry.fresh(now)) {
      return null;
    }
    Session session = entry.session().getNow(null);
    return session != null && session.expiresAtMs() > now ? session : null;
  }

  private Entry validate(String token, long now) {
    while (true) {
      Entry current = entries.get(token);
      if (current != null && current.fresh(now)) {
        return current;
      }
      Entry placeholder = new Entry(new CompletableFuture<>(), Long.MAX_VALUE);
      boolean mine = current == null
          ? entries.putIfAbsent(token, placeholder) == null
          : entries.replace(token, current, placeholder);
      if (!mine) {
        continue;
      }
      try {
        Session session = lm.validateSession(token);
        Entry done = new Entry(placeholder.session(), Math.min(session.expiresAtMs(), now + TRUST_MS));
        entries.replace(token, placeholder, done);
        placeholder.session().complete(session);
        purgeIfLarge(now);
        return done;
      } catch (RuntimeException e) {
        entries.remove(token, placeholder);
        placeholder.session().completeExceptionally(e);
        return placeholder;
      }
    }
  }

  private void purgeIfLarge(long now) {
    if (entries.size() > PURGE_ABOVE) {
      entries.values().removeIf(e -> e.session().isDone() && !e.fresh(now));
    }
  }

  private static Session join(String token, Entry entry) {
    try {
      return entry.session().join();
    } catch (CompletionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof DataClayException d) {
        throw d;
      }
      throw new InternalException("validating a session failed: " + cause);
    }
  }
}
