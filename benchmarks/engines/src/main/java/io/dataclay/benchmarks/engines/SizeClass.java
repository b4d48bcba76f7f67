package io.dataclay.benchmarks.engines;

import java.util.List;

/**
 * An object size the benchmark measures, with the operations per round that keep each engine's
 * phase short (1 MiB objects need far fewer; postgres is capped by time instead).
 *
 * @param label how the size is printed
 * @param bytes total bytes of field values per object (4 equal fields)
 * @param putOps new objects stored per round
 * @param getOps reads per round
 * @param updateOps deltas per round
 * @param hotObjects when positive, gets are also measured on only this many objects (cache-resident), 0 for none
 */
record SizeClass(String label, int bytes, int putOps, int getOps, int updateOps, int hotObjects) {
  /** Fields per object of the size classes. */
  static final int FIELDS = 4;

  /** The three sizes of issue 3, at {@code scale} times the default operation counts (at least 1 op each). */
  static List<SizeClass> standard(double scale) {
    return List.of(
        new SizeClass("100 B", 100, scaled(100_000, scale), scaled(200_000, scale), scaled(100_000, scale), 1000),
        new SizeClass("4 KiB", 4 << 10, scaled(20_000, scale), scaled(50_000, scale), scaled(20_000, scale), 0),
        new SizeClass("1 MiB", 1 << 20, scaled(100, scale), scaled(200, scale), scaled(100, scale), 0));
  }

  /** {@code ops} times {@code scale}, at least 1. */
  static int scaled(int ops, double scale) {
    return (int) Math.max(1, Math.round(ops * scale));
  }
}
