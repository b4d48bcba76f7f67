package io.dataclay.logic.accounts;

import io.dataclay.common.ClusterSecret;
import io.dataclay.exceptions.NotAuthenticatedException;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Set;

/**
 * Checks a backend's proof that it knows the cluster secret: the HMAC must match, its time must
 * be within {@link #SKEW_MS} of this clock, and its nonce must not have been used within that
 * window (a captured proof cannot be replayed).
 */
public final class BackendProofs {
  /** How far a proof's time may be from this Logic Module's clock. */
  static final long SKEW_MS = 5 * 60_000;
  private static final int MAX_NONCE = 128;

  private record Used(String nonce, long atMs) {}

  private final ClusterSecret secret;
  private final Clock clock;
  private final Set<String> nonces = new HashSet<>();
  private final ArrayDeque<Used> order = new ArrayDeque<>();

  /** Checks proofs against {@code secret} (none: every proof fails) and {@code clock}. */
  public BackendProofs(ClusterSecret secret, Clock clock) {
    this.secret = secret;
    this.clock = clock;
  }

  /**
   * Returns normally when the proof is good and new.
   *
   * @throws NotAuthenticatedException saying which part failed (never revealing the expected proof)
   */
  synchronized void verify(String backendId, long issuedAtMs, String nonce, byte[] proof) {
    long now = clock.millis();
    if (nonce == null || nonce.isEmpty() || nonce.length() > MAX_NONCE) {
      throw new NotAuthenticatedException("backend session: nonce must be 1-" + MAX_NONCE + " characters");
    }
    if (Math.abs(now - issuedAtMs) > SKEW_MS) {
      throw new NotAuthenticatedException("backend session: the proof was made at " + issuedAtMs
          + " ms, more than " + SKEW_MS / 1000 + " s from the Logic Module's clock (" + now + " ms)");
    }
    if (secret == null || !secret.verifies(backendId, issuedAtMs, nonce, proof)) {
      throw new NotAuthenticatedException("backend session: the proof does not match this cluster's secret"
          + " (DATACLAY_CLUSTER_SECRET_FILE must name the same secret on every server)");
    }
    forgetOlderThan(now - 2 * SKEW_MS);
    if (!nonces.add(nonce)) {
      throw new NotAuthenticatedException("backend session: this proof was used before (a replay)");
    }
    order.addLast(new Used(nonce, now));
  }

  private void forgetOlderThan(long limitMs) {
    while (!order.isEmpty() && order.peekFirst().atMs() < limitMs) {
      nonces.remove(order.removeFirst().nonce());
    }
  }
}
