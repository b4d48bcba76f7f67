package io.dataclay.ds.environments;

import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The last delta sequence applied per object by one incarnation of an execution environment. A
 * restarted environment gets a fresh instance (its sequences start again), so entries never
 * outlive the process that wrote them. Holds one entry per object the incarnation changed.
 */
public final class DeltaSequences {
  private final ConcurrentHashMap<UUID, Long> last = new ConcurrentHashMap<>();

  /**
   * Runs {@code apply} when {@code sequence} is greater than the last one applied to {@code id},
   * atomically with recording it; returns whether it ran. When {@code apply} throws, nothing is
   * recorded and the exception propagates.
   */
  public boolean applyIfNewer(UUID id, long sequence, Runnable apply) {
    boolean[] ran = {false};
    last.compute(id, (k, previous) -> {
      if (previous != null && sequence <= previous) {
        return previous;
      }
      apply.run();
      ran[0] = true;
      return sequence;
    });
    return ran[0];
  }
}
