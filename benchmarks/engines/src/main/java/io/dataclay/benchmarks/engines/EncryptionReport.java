package io.dataclay.benchmarks.engines;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * What encryption at rest costs: for every engine measured both plain and with a store key
 * ({@code kv} and {@code kv+enc}) in one run, each op's encrypted figure against the plain one.
 */
final class EncryptionReport {
  private static final String ROW = "%-13s %-17s %-12s %11s %11s %7s %9s %9s %6s %9s %9s %6s%n";

  private EncryptionReport() {}

  /** Prints the comparison; nothing when no engine ran both ways. */
  static void print(PrintStream out, List<Measurement> results) {
    List<Measurement> encrypted = results.stream().filter(m -> BenchmarkSettings.encrypted(m.engine())).toList();
    boolean header = false;
    for (Measurement enc : encrypted) {
      Optional<Measurement> plain = results.stream()
          .filter(m -> m.is(BenchmarkSettings.baseEngine(enc.engine()), enc.op(), enc.size())).findFirst();
      if (plain.isEmpty()) {
        continue;
      }
      if (!header) {
        out.println();
        out.println("Encryption at rest: each engine with a store key (+enc) against itself without, same run;"
            + " x = encrypted / plain (time per op, p50, p99).");
        out.printf(ROW, "engine", "op", "size", "plain ops/s", "enc ops/s", "x", "p50 plain", "p50 enc", "x",
            "p99 plain", "p99 enc", "x");
        header = true;
      }
      Measurement p = plain.get();
      out.printf(ROW, enc.engine(), enc.op(), enc.size(), Report.count(p.opsPerSecond()), Report.count(enc.opsPerSecond()),
          ratio(p.opsPerSecond(), enc.opsPerSecond()), Report.micros(p.p50Nanos()), Report.micros(enc.p50Nanos()),
          ratio(enc.p50Nanos(), p.p50Nanos()), Report.micros(p.p99Nanos()), Report.micros(enc.p99Nanos()),
          ratio(enc.p99Nanos(), p.p99Nanos()));
    }
  }

  private static String ratio(double numerator, double denominator) {
    return denominator == 0 ? "-" : String.format(Locale.ROOT, "%.2f", numerator / denominator);
  }
}
