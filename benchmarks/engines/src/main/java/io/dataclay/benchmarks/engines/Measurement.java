package io.dataclay.benchmarks.engines;

/**
 * What one operation on one engine and object size measured, over its measured rounds.
 *
 * @param engine engine name (kv, heap, 2lm, postgres, memory)
 * @param op operation name (put, get, update, ...)
 * @param size object size label (100 B, 4 KiB, 1 MiB, ...)
 * @param ops operations timed (warm-up rounds excluded)
 * @param opsPerSecond ops/s of the median measured round (robust to a round disturbed by other load)
 * @param p50Nanos median latency of one operation
 * @param p99Nanos 99th percentile latency of one operation
 * @param slowestRound ops/s of the slowest measured round
 * @param fastestRound ops/s of the fastest measured round
 * @param gcMillis garbage collection time inside the measured rounds
 * @param cpuShare CPU time of the measuring thread / wall-clock time, over the measured rounds
 */
record Measurement(String engine, String op, String size, long ops, double opsPerSecond, long p50Nanos,
    long p99Nanos, double slowestRound, double fastestRound, long gcMillis, double cpuShare) {

  /** Whether this is the measurement of {@code engine}, {@code op} at {@code size}. */
  boolean is(String engine, String op, String size) {
    return this.engine.equals(engine) && this.op.equals(op) && this.size.equals(size);
  }
}
