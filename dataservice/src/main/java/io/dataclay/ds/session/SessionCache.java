package io.dataclay.ds.session;

import io.dataclay.server.FailureThrottle;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.NotAuthenticatedException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Collection;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Client sessions, validated once with the Logic Module and then served from memory until
 * min(session expiry, validation + 60 s, the next change of its contracts), or until the Logic
 * Module says the session was closed or access changed ({@link #revoke}, {@link #forgetAll}). A
 * hit is one map lookup; concurrent first uses of a token share one Logic Module call. A refused
 * token is remembered for {@link #REFUSAL_MS}, and a peer that keeps sending unknown tokens is
 * refused without asking the Logic Module for a while.
 */
public final class SessionCache {
  /** How long a validated session is trusted without asking the Logic Module again. */
  public static final long TRUST_MS = 60_000;
  /** How long a refused token is refused without asking the Logic Module again. */
  public static final long REFUSAL_MS = 2_000;
  private static final int PURGE_ABOVE = 4096;

  private final SessionAuthority lm;
  private final LongSupplier clock;
  private final FailureThrottle badTokens;
  private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

  private record Entry(CompletableFuture<Session> session, long validUntilMs, String tokenSha256) {
    boolean fresh(long now) {
      return now < validUntilMs;
    }
  }

  /** A cache that validates through {@code lm}, on the wall clock. */
  public SessionCache(SessionAuthority lm) {
    this(lm, System::currentTimeMillis);
  }

  /** A cache on a given clock (epoch milliseconds). */
  public SessionCache(SessionAuthority lm, LongSupplier clock) {
    this.lm = Objects.requireNonNull(lm, "lm");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.badTokens = new FailureThrottle("with unknown session tokens from", 50, Duration.ofSeconds(10),
        Duration.ofSeconds(10), Duration.ofMinutes(5), clock);
  }

  /**
   * The session of {@code token}.
   *
   * @throws NotAuthenticatedException when the token is missing, unknown, closed or expired
   */
  public Session resolve(String token) {
    return resolve(token, "unknown");
  }

  /**
   * The session of {@code token}, sent by {@code peer} (a network address: unknown tokens are
   * throttled per peer).
   *
   * @throws NotAuthenticatedException when the token is missing, unknown, closed or expired
   */
  public Session resolve(String token, String peer) {
    if (token == null || token.isEmpty()) {
      throw new NotAuthenticatedException("the call carries no session token (metadata dataclay-session)");
    }
    long now = clock.getAsLong();
    Entry entry = entries.get(token);
    if (entry == null || !entry.fresh(now)) {
      badTokens.check(peer);
      entry = validate(token, now);
    }
    Session session;
    try {
      session = join(entry);
    } catch (NotAuthenticatedException e) {
      badTokens.failed(peer);
      throw e;
    }
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
    CompletableFuture<Session> future = entry.session();
    if (!future.isDone() || future.isCompletedExceptionally()) {
      return null; // being validated, or refused: the caller resolves it off the network thread
    }
    Session session = future.getNow(null);
    return session != null && session.expiresAtMs() > now ? session : null;
  }

  /** Stops trusting the sessions whose tokens hash (SHA-256, hex) to one of {@code tokenSha256}. */
  public void revoke(Collection<String> tokenSha256) {
    if (tokenSha256.isEmpty()) {
      return;
    }
    Set<String> closed = Set.copyOf(tokenSha256);
    entries.values().removeIf(e -> closed.contains(e.tokenSha256()));
  }

  /** Stops trusting every cached session (their access may have changed). */
  public void forgetAll() {
    entries.clear();
  }

  private Entry validate(String token, long now) {
    while (true) {
      Entry current = entries.get(token);
      if (current != null && current.fresh(now)) {
        return current;
      }
      Entry placeholder = new Entry(new CompletableFuture<>(), Long.MAX_VALUE, sha256(token));
      boolean mine = current == null
          ? entries.putIfAbsent(token, placeholder) == null
          : entries.replace(token, current, placeholder);
      if (!mine) {
        continue;
      }
      try {
        Session session = lm.validateSession(token);
        long until = Math.min(session.expiresAtMs(), now + TRUST_MS);
        if (session.accessChangesAtMs() > 0) {
          until = Math.min(until, session.accessChangesAtMs());
        }
        Entry done = new Entry(placeholder.session(), until, placeholder.tokenSha256());
        entries.replace(token, placeholder, done);
        placeholder.session().complete(session);
        purgeIfLarge(now);
        return done;
      } catch (NotAuthenticatedException e) {
        // remembered briefly: a client retrying a dead token costs the Logic Module one call per REFUSAL_MS
        Entry refused = new Entry(placeholder.session(), now + REFUSAL_MS, placeholder.tokenSha256());
        entries.replace(token, placeholder, refused);
        placeholder.session().completeExceptionally(e);
        purgeIfLarge(now);
        return refused;
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

  private static Session join(Entry entry) {
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

  /** The SHA-256 of a token in lower-case hex: how the Logic Module names closed sessions. */
  static String sha256(String token) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
          .digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is not available in this JVM", e);
    }
  }
}
