package io.dataclay.logic.events;

import java.time.Clock;
import java.util.ArrayDeque;
import java.util.List;

/**
 * The {@link #CAPACITY} newest cluster events, in memory only (a restarted Logic Module starts an
 * empty history), each stamped with the Logic Module's clock when recorded. Safe for any number of
 * threads.
 */
public final class ClusterEvents {
  /** How many events are kept; recording one more drops the oldest. */
  public static final int CAPACITY = 200;

  private final Clock clock;
  private final ArrayDeque<ClusterEvent> newest = new ArrayDeque<>(CAPACITY);

  /** An empty history whose events are stamped by {@code clock}. */
  public ClusterEvents(Clock clock) {
    this.clock = clock;
  }

  /** Records an event that happens now ({@code backendId} and {@code detail}: empty when they do not apply). */
  public void record(String kind, String backendId, long objects, long term, String detail) {
    synchronized (newest) {
      // stamped under the lock, so that the history is in the clock's order too
      ClusterEvent e = new ClusterEvent(clock.millis(), kind, backendId, objects, term, detail);
      if (newest.size() == CAPACITY) {
        newest.removeFirst();
      }
      newest.addLast(e);
    }
  }

  /** The events kept, oldest first. */
  public List<ClusterEvent> list() {
    synchronized (newest) {
      return List.copyOf(newest);
    }
  }
}
