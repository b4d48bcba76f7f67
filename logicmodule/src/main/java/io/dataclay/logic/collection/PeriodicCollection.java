package io.dataclay.logic.collection;

import io.dataclay.exceptions.DataClayException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Runs a garbage collection every interval, the next one an interval after the previous one
 * ended, on a daemon thread of its own. A failed collection is logged and the schedule goes on.
 */
public final class PeriodicCollection implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(PeriodicCollection.class.getName());

  private final ScheduledExecutorService timer;

  private PeriodicCollection(ScheduledExecutorService timer) {
    this.timer = timer;
  }

  /**
   * Runs {@code collectOnce} (one whole collection) every {@code interval}; a zero interval starts
   * nothing (collections then run only on CollectGarbage).
   *
   * @throws IllegalArgumentException when the interval is negative
   */
  public static PeriodicCollection start(Runnable collectOnce, Duration interval) {
    if (interval.isNegative()) {
      throw new IllegalArgumentException("garbage collection interval must not be negative, got " + interval);
    }
    if (interval.isZero()) {
      return new PeriodicCollection(null);
    }
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "lm-garbage-collection");
      t.setDaemon(true);
      return t;
    });
    long ms = interval.toMillis();
    timer.scheduleWithFixedDelay(() -> runOnce(collectOnce), ms, ms, TimeUnit.MILLISECONDS);
    return new PeriodicCollection(timer);
  }

  private static void runOnce(Runnable collectOnce) {
    try {
      collectOnce.run();
    } catch (DataClayException e) {
      // already logged by the collector with its reason; the next run tries again
      LOG.fine(() -> "periodic garbage collection failed: " + e.getMessage());
    } catch (RuntimeException e) {
      // an exception escaping here would cancel every later run
      LOG.log(Level.WARNING, "periodic garbage collection failed", e);
    }
  }

  /** Stops scheduling; a collection in progress is interrupted. */
  @Override
  public void close() {
    if (timer != null) {
      timer.shutdownNow();
    }
  }
}
