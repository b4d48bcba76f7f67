package io.dataclay.benchmarks.engines;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** Prints the results of a run: the table (with each figure against the memory baseline) and the targets. */
final class Report {
  private static final String ROW = "%-8s %-17s %-12s %9s %12s %10s %10s %9s %6s %6s   %s%n";

  private Report() {}

  /** Prints every measurement, in run order, then the target lines. */
  static void print(PrintStream out, List<Measurement> results, List<String> failures) {
    out.printf(ROW, "engine", "op", "size", "ops", "ops/s", "p50 us", "p99 us", "x memory", "gc ms", "cpu %", "rounds: slowest..fastest ops/s");
    String previous = null;
    for (Measurement m : results) {
      if (previous != null && !previous.equals(m.engine())) {
        out.println();
      }
      previous = m.engine();
      out.printf(ROW, m.engine(), m.op(), m.size(), m.ops(), count(m.opsPerSecond()), micros(m.p50Nanos()),
          micros(m.p99Nanos()), vsMemory(results, m), m.gcMillis(),
          String.format(Locale.ROOT, "%.0f", 100 * m.cpuShare()), count(m.slowestRound()) + ".." + count(m.fastestRound()));
    }
    out.println();
    out.println("ops/s = the median timed round's; rounds: the slowest and fastest timed rounds' ops/s; p50/p99 over every timed op.");
    out.println("x memory = time per op / memory engine's time per op for the same op and size, same run (1.00 = as fast as DRAM).");
    out.println("gc ms = garbage-collection pause time inside the timed rounds (counted in ops/s and the latencies).");
    out.println("get = random over every object put in that size's put rounds; " + EngineRun.HOT_GET
        + " = random over the first 1,000 of them only (they stay in the CPU caches).");
    out.println("cpu % = the measuring thread's CPU time / wall-clock time in the timed rounds: well below 100 on memory,"
        + " kv or heap means other load took the CPU (a noisy machine), on 2lm or postgres it also counts waiting.");
    out.println("update = ObjectDelta changing 1 of the object's 4 equal fields (a quarter of its bytes) to a same-size value.");
    out.println(EngineRun.COUNTER_UPDATE + " = ObjectDelta changing only the 8-byte field of an object {8-byte field, 1 MiB field};");
    out.println(EngineRun.COUNTER_REWRITE + " = put of that whole object with the 8-byte field changed (what a plain key-value store does).");
    out.println("2lm: puts and updates are acknowledged from DRAM and durable only at the next checkpoint (default cache"
        + " 256 MiB, checkpoint every 1000 ms, both used here); a cached get never touches NVRAM.");
    out.println("postgres: every put/update is one committed transaction (fsync on); rounds are capped by time.");
    EncryptionReport.print(out, results);
    out.println();
    out.println("Targets (issue 3):");
    for (String line : Targets.judge(results)) {
      out.println("  " + line);
    }
    if (!failures.isEmpty()) {
      out.println();
      out.println("FAILED:");
      for (String f : failures) {
        out.println("  " + f);
      }
    }
  }

  /** A count with thousands separators, rounded to a whole number. */
  static String count(double value) {
    return String.format(Locale.ROOT, "%,d", Math.round(value));
  }

  /** Nanoseconds as microseconds, with precision fit for the magnitude. */
  static String micros(long nanos) {
    double us = nanos / 1000.0;
    if (us < 10) {
      return String.format(Locale.ROOT, "%.2f", us);
    }
    return us < 1000 ? String.format(Locale.ROOT, "%.1f", us) : String.format(Locale.ROOT, "%,d", Math.round(us));
  }

  private static String vsMemory(List<Measurement> results, Measurement m) {
    Optional<Measurement> memory = results.stream().filter(b -> b.is("memory", m.op(), m.size())).findFirst();
    if (memory.isEmpty() || m.opsPerSecond() == 0) {
      return "-";
    }
    return String.format(Locale.ROOT, "%.2f", memory.get().opsPerSecond() / m.opsPerSecond());
  }
}
