package io.dataclay.benchmarks.engines;

import java.util.Arrays;

/**
 * Per-operation latencies in nanoseconds, kept whole (no bucketing) so that percentiles are
 * exact; capacity is fixed up front so that recording never allocates inside a timed loop.
 */
final class LatencySamples {
  private final long[] nanos;
  private int count;

  /** Room for {@code capacity} samples. */
  LatencySamples(int capacity) {
    if (capacity < 0) {
      throw new IllegalArgumentException("latency sample capacity must not be negative, got " + capacity);
    }
    nanos = new long[capacity];
  }

  /** Records one latency; the caller never records more than the capacity. */
  void add(long latencyNanos) {
    nanos[count++] = latencyNanos;
  }

  /**
   * The nearest-rank percentile {@code p} (0 < p <= 100) of the samples in nanoseconds: the
   * smallest sample with at least p% of all samples at or below it.
   *
   * @throws IllegalStateException when nothing was recorded
   */
  long percentile(double p) {
    if (!(p > 0 && p <= 100)) {
      throw new IllegalArgumentException("percentile must be in (0, 100], got " + p);
    }
    if (count == 0) {
      throw new IllegalStateException("no latency was recorded");
    }
    long[] sorted = Arrays.copyOf(nanos, count);
    Arrays.sort(sorted);
    int rank = (int) Math.ceil(p / 100.0 * count);
    return sorted[Math.max(rank, 1) - 1];
  }
}
