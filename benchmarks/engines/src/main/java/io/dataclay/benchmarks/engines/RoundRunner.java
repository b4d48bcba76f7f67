package io.dataclay.benchmarks.engines;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * Measures one operation: warm-up rounds (run, not counted), then timed rounds. Every operation is
 * timed on its own with {@link System#nanoTime()} (one clock read per operation: the end of one is
 * the start of the next), and a round stops early once it has run for the round budget, which is
 * how slow engines (postgres) are capped by time rather than by count. The figure reported is the
 * median round's ops/s: on a shared machine one round disturbed by other load then does not move
 * it, and the slowest and fastest rounds are reported beside it. The heap is collected
 * before each measurement, so that garbage of an earlier one is not collected inside it; the
 * collector's pause time inside timed rounds is reported with the figures, and so is the share of
 * the timed wall-clock time the measuring thread spent on a CPU: below ~95% on an engine that
 * does not wait (memory, kv, heap), the thread was descheduled by other load and the ops/s is low
 * for that reason (the p50 latency is much less affected).
 */
final class RoundRunner {
  /** One round's operations; its inputs were prepared before the clock started. */
  interface Round {
    /** Runs operation {@code i} of the round. */
    void run(int i);

    /** Called after the round with how many operations ran (fewer than asked when the budget ran out). */
    default void finished(int done) {}
  }

  /** Prepares a round of at most {@code ops} operations; round numbers count warm-up rounds too. */
  interface RoundFactory {
    /** The round's operations, with every input built (objects, deltas, IDs). */
    Round prepare(int round, int ops);
  }

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private final int warmupRounds;
  private final int rounds;
  private final long roundBudgetNanos;

  /** A runner doing {@code warmupRounds} untimed then {@code rounds} timed rounds of at most {@code roundBudgetNanos} each. */
  RoundRunner(int warmupRounds, int rounds, long roundBudgetNanos) {
    if (warmupRounds < 0 || rounds <= 0 || roundBudgetNanos <= 0) {
      throw new IllegalArgumentException("need warm-up rounds >= 0, rounds > 0 and a positive round budget; got "
          + warmupRounds + ", " + rounds + ", " + roundBudgetNanos + " ns");
    }
    this.warmupRounds = warmupRounds;
    this.rounds = rounds;
    this.roundBudgetNanos = roundBudgetNanos;
  }

  /** Runs every round of {@code opsPerRound} operations and returns what the timed ones measured. */
  Measurement measure(String engine, String op, String size, int opsPerRound, RoundFactory factory) {
    if (opsPerRound <= 0) {
      throw new IllegalArgumentException("operations per round must be positive, got " + opsPerRound);
    }
    LatencySamples samples = new LatencySamples(rounds * opsPerRound);
    System.gc();
    long gcMillis = 0;
    long totalOps = 0;
    double[] rates = new double[rounds];
    long cpuNanos = 0;
    long wallNanos = 0;
    for (int r = 0; r < warmupRounds + rounds; r++) {
      Round round = factory.prepare(r, opsPerRound);
      boolean timed = r >= warmupRounds;
      long gcBefore = gcMillis();
      long cpuBefore = THREADS.getCurrentThreadCpuTime();
      long start = System.nanoTime();
      long previous = start;
      int done = 0;
      while (done < opsPerRound) {
        round.run(done);
        long now = System.nanoTime();
        if (timed) {
          samples.add(now - previous);
        }
        previous = now;
        done++;
        if (now - start >= roundBudgetNanos) {
          break;
        }
      }
      long cpuAfter = THREADS.getCurrentThreadCpuTime();
      round.finished(done);
      if (timed) {
        cpuNanos += cpuAfter - cpuBefore;
        wallNanos += previous - start;
        gcMillis += gcMillis() - gcBefore;
        totalOps += done;
        rates[r - warmupRounds] = done * 1e9 / Math.max(previous - start, 1);
      }
    }
    Arrays.sort(rates);
    return new Measurement(engine, op, size, totalOps, rates[rounds / 2], samples.percentile(50),
        samples.percentile(99), rates[0], rates[rounds - 1], gcMillis, (double) cpuNanos / Math.max(wallNanos, 1));
  }

  /** Total milliseconds the collectors have spent since the JVM started. */
  private static long gcMillis() {
    long total = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      total += Math.max(0, gc.getCollectionTime());
    }
    return total;
  }
}
