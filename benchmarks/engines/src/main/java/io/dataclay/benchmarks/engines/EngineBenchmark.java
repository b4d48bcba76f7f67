package io.dataclay.benchmarks.engines;

import java.util.ArrayList;
import java.util.List;

/**
 * Issue 3's engine micro-benchmark: put, get and update ops/s with p50/p99 latency for 100 B,
 * 4 KiB and 1 MiB objects on every store engine, one thread, in one run, plus the 8-byte-field
 * update of a 1 MiB object; prints the table, the ratios to the memory engine and the targets.
 * Exit code 0 when every engine ran, 1 when one failed (the others still run), 2 on bad arguments.
 */
public final class EngineBenchmark {
  private EngineBenchmark() {}

  /** Runs the benchmark with {@code --key=value} arguments (see {@link BenchmarkSettings}). */
  public static void main(String[] args) {
    BenchmarkSettings settings;
    try {
      settings = BenchmarkSettings.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("engines benchmark: " + e.getMessage());
      System.exit(2);
      return;
    }
    RunEnvironment.print(System.out, settings);
    if (settings.engines().stream().anyMatch(BenchmarkSettings::encrypted)) {
      System.err.printf("AES-GCM warm-up (JIT) took %.1f s%n", CryptoWarmUp.run());
    }
    EngineRun run = new EngineRun(settings);
    List<Measurement> results = new ArrayList<>();
    List<String> failures = new ArrayList<>();
    for (String engine : settings.engines()) {
      long start = System.nanoTime();
      System.err.println("running " + engine + " ...");
      try {
        results.addAll(run.run(engine));
      } catch (RuntimeException e) {
        failures.add(engine + ": " + e);
        e.printStackTrace();
      }
      System.err.printf("%s done in %.1f s%n", engine, (System.nanoTime() - start) / 1e9);
    }
    Report.print(System.out, results, failures);
    System.out.println();
    System.out.println("load average at the end: " + RunEnvironment.loadAverage());
    System.exit(failures.isEmpty() ? 0 : 1);
  }
}
