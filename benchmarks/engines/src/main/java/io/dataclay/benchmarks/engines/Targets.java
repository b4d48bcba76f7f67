package io.dataclay.benchmarks.engines;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** Issue 3's performance targets, each judged met or not met on the measurements of one run. */
final class Targets {
  /** Small-object get target, ops/s from one thread. */
  static final double GET_TARGET = 1_000_000;
  /** Small-object durable put target, ops/s from one thread. */
  static final double PUT_TARGET = 200_000;
  /** How many times faster heap must update an 8-byte field of a 1 MiB object than kv. */
  static final double FIELD_UPDATE_RATIO = 50;
  /** The size the small-object targets are judged at. */
  static final String SMALL = "100 B";

  private Targets() {}

  /**
   * One line per target: what it asks, the figure measured (median-round ops/s, judged) with its p50
   * latency beside it (steadier on a shared machine), MET or NOT MET (or not measured).
   */
  static List<String> judge(List<Measurement> results) {
    List<String> lines = new ArrayList<>();
    for (String engine : List.of("kv", "heap")) {
      lines.add(atLeast(results, engine, "get", GET_TARGET, "get " + SMALL));
    }
    for (String engine : List.of("kv", "heap")) {
      lines.add(atLeast(results, engine, "put", PUT_TARGET, "durable put " + SMALL));
    }
    lines.add(ratio(results, EngineRun.COUNTER_UPDATE,
        "heap update of the 8-byte field of a 1 MiB object >= 50x kv doing the same update (ObjectDelta on both)"));
    lines.add(ratio(results, EngineRun.COUNTER_REWRITE,
        "heap update of the 8-byte field of a 1 MiB object >= 50x kv rewriting the whole object (put)"));
    return lines;
  }

  private static String atLeast(List<Measurement> results, String engine, String op, double target, String what) {
    String asked = String.format(Locale.ROOT, "%-4s %s >= %s ops/s", engine, what, Report.count(target));
    Optional<Measurement> m = find(results, engine, op, SMALL);
    if (m.isEmpty()) {
      return asked + ": not measured";
    }
    double got = m.get().opsPerSecond();
    return asked + ": " + Report.count(got) + " ops/s (p50 " + Report.micros(m.get().p50Nanos()) + " us) -> "
        + verdict(got >= target);
  }

  private static String ratio(List<Measurement> results, String kvOp, String asked) {
    Optional<Measurement> heap = find(results, "heap", EngineRun.COUNTER_UPDATE, EngineRun.COUNTER_SIZE);
    Optional<Measurement> kv = find(results, "kv", kvOp, EngineRun.COUNTER_SIZE);
    if (heap.isEmpty() || kv.isEmpty()) {
      return asked + ": not measured";
    }
    double r = heap.get().opsPerSecond() / kv.get().opsPerSecond();
    double byP50 = (double) kv.get().p50Nanos() / Math.max(heap.get().p50Nanos(), 1);
    return String.format(Locale.ROOT, "%s: heap %s ops/s / kv %s ops/s = %.1fx (p50: kv %s us / heap %s us = %.1fx) -> %s",
        asked, Report.count(heap.get().opsPerSecond()), Report.count(kv.get().opsPerSecond()), r,
        Report.micros(kv.get().p50Nanos()), Report.micros(heap.get().p50Nanos()), byP50, verdict(r >= FIELD_UPDATE_RATIO));
  }

  private static Optional<Measurement> find(List<Measurement> results, String engine, String op, String size) {
    return results.stream().filter(m -> m.is(engine, op, size)).findFirst();
  }

  private static String verdict(boolean met) {
    return met ? "MET" : "NOT MET";
  }
}
