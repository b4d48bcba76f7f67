package io.dataclay.ds.replication;

import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * Whether this backend may act as the master of replicated objects now, and the failover terms it
 * knows (see the Logic Module's Failover). Each heartbeat answer renews the lease, from the moment
 * the heartbeat was sent, for the time the Logic Module grants: while it lasts, the Logic Module
 * cannot have promoted a replica of an object mastered here. Past it (the Logic Module unheard
 * for that long), this backend neither serves nor changes its replicated objects, which their
 * replicas serve instead. A change passed on between backends carries the sender's term, and a
 * backend refuses one whose term is older than the sender's term it knows.
 */
public final class Mastership {
  private final LongSupplier nanos;
  private final String self;
  private volatile Map<String, Long> terms = Map.of();
  private volatile long leaseEndsNanos;
  private volatile boolean leased; // false until the first answer, and while demotions are pending
  private volatile boolean unlimited; // the Logic Module never promotes: no lease is needed
  private final LongAdder fenced = new LongAdder();
  private final LongAdder leaseRefusals = new LongAdder();

  /** The mastership of backend {@code self}, timed by {@code nanos} (System::nanoTime). */
  public Mastership(UUID self, LongSupplier nanos) {
    this.self = self.toString();
    this.nanos = nanos;
  }

  /**
   * Records a heartbeat answer: the terms, and, when {@code renew}, a lease of {@code leaseMs}
   * (0: the Logic Module never promotes) from {@code sentAtNanos}, when the heartbeat was sent.
   */
  public void heard(long sentAtNanos, long leaseMs, Map<String, Long> answered, boolean renew) {
    learn(answered);
    if (renew) {
      unlimited = leaseMs == 0;
      leaseEndsNanos = sentAtNanos + leaseMs * 1_000_000L;
      leased = true;
    }
  }

  /** Learns newer terms (the Logic Module announces them before it promotes a replica). */
  public synchronized void learn(Map<String, Long> announced) {
    Map<String, Long> merged = new java.util.HashMap<>(terms);
    announced.forEach((backend, term) -> merged.merge(backend, term, Math::max));
    terms = Map.copyOf(merged);
  }

  /** Whether this backend may act as a master of replicated objects now. */
  public boolean leaseValid() {
    return leased && (unlimited || nanos.getAsLong() - leaseEndsNanos < 0);
  }

  /** This backend's own term, as the Logic Module last said. */
  public long ownTerm() {
    return terms.getOrDefault(self, 0L);
  }

  /**
   * Refuses to act as master of a replicated object while the lease has run out.
   *
   * @throws BackendUnavailableException naming the object and why
   */
  public void requireLease(UUID id) {
    if (!leaseValid()) {
      leaseRefusals.increment();
      throw new BackendUnavailableException("object " + id + " is replicated and this backend has not heard from the"
          + " Logic Module within its master lease: its replicas serve it (the Logic Module may be promoting one)");
    }
  }

  /**
   * Refuses a change or copy from backend {@code sender} stamped with {@code senderTerm} when this
   * backend knows a newer term of it: that sender's masters were promoted away while it was cut off.
   *
   * @throws PermissionDeniedException naming both terms
   */
  public void requireCurrent(String sender, long senderTerm) {
    long known = terms.getOrDefault(sender, 0L);
    if (senderTerm < known) {
      fenced.increment();
      throw new PermissionDeniedException("backend " + sender + " sent a change with term " + senderTerm + ", but its"
          + " term is " + known + ": its master copies were promoted away while it was unreachable (fenced)");
    }
  }

  /** Changes and copies refused since start because their sender's term was stale (fenced). */
  public long fencedRefusals() {
    return fenced.sum();
  }

  /** Requests on replicated objects refused since start because the master lease had run out. */
  public long leaseRefusals() {
    return leaseRefusals.sum();
  }
}
