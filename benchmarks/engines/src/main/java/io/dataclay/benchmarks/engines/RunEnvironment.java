package io.dataclay.benchmarks.engines;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** Describes what a run ran on (machine, JVM, pmem emulation, PostgreSQL settings), for the report. */
final class RunEnvironment {
  private RunEnvironment() {}

  /** Prints the machine, the pool directory and, when postgres runs, the server's durability settings. */
  static void print(PrintStream out, BenchmarkSettings settings) {
    out.println("machine: " + cpuModel() + ", " + Runtime.getRuntime().availableProcessors() + " cpus, "
        + memTotal() + " RAM, load average " + loadAverage() + "; Java " + System.getProperty("java.vm.version") + ", heap max "
        + (Runtime.getRuntime().maxMemory() >> 20) + " MiB, flags " + ManagementFactory.getRuntimeMXBean().getInputArguments());
    out.println("pools: " + settings.poolDir() + " (" + fileSystem(settings.poolDir()) + "), "
        + (settings.poolBytes() >> 20) + " MiB each, PMEM_IS_PMEM_FORCE=" + environment("PMEM_IS_PMEM_FORCE")
        + ", PMEMOBJ_CONF=" + environment("PMEMOBJ_CONF"));
    out.printf(Locale.ROOT, "harness: %d warm-up + %d timed rounds per measurement, round budget %.1f s, scale %s,"
        + " seed %d, one thread; clock read costs %.0f ns%n", settings.warmupRounds(), settings.rounds(),
        settings.roundSeconds(), settings.scale(), settings.seed(), clockReadNanos());
    if (settings.engines().contains("postgres")) {
      out.println("postgres: " + postgresSettings(settings.postgresUrl()));
    }
    out.println();
  }

  // Shown, not used: PMDK reads these itself.
  private static String environment(String name) {
    String value = System.getenv(name);
    return value == null ? "(unset)" : value;
  }

  private static String postgresSettings(String url) {
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
      String version = one(s, "SHOW server_version");
      String dataDir = one(s, "SHOW data_directory");
      return "PostgreSQL " + version + ", fsync=" + one(s, "SHOW fsync") + ", synchronous_commit="
          + one(s, "SHOW synchronous_commit") + ", wal_sync_method=" + one(s, "SHOW wal_sync_method")
          + ", data directory " + dataDir + " (" + fileSystem(Path.of(dataDir)) + ")";
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read the PostgreSQL server's settings: " + e.getMessage(), e);
    }
  }

  private static String one(Statement s, String sql) throws SQLException {
    try (ResultSet r = s.executeQuery(sql)) {
      r.next();
      return r.getString(1);
    }
  }

  private static double clockReadNanos() {
    clockReadOnce(); // the first pass is interpreted code
    return clockReadOnce();
  }

  private static double clockReadOnce() {
    int n = 1_000_000;
    long sink = 0;
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      sink += System.nanoTime();
    }
    long elapsed = System.nanoTime() - start;
    return sink == 42 ? 0 : (double) elapsed / n;
  }

  private static String cpuModel() {
    return procLine(Path.of("/proc/cpuinfo"), "model name").orElse("unknown CPU");
  }

  private static String memTotal() {
    return procLine(Path.of("/proc/meminfo"), "MemTotal")
        .map(kb -> String.format(Locale.ROOT, "%.1f GiB", Long.parseLong(kb.replaceAll("[^0-9]", "")) / 1048576.0))
        .orElse("unknown");
  }

  /** The kernel's load averages (1, 5, 15 min) and task counts: how busy the shared machine was. */
  static String loadAverage() {
    return procFirstLine(Path.of("/proc/loadavg"));
  }

  private static String procFirstLine(Path file) {
    try {
      return Files.readAllLines(file).stream().findFirst().orElse("unknown");
    } catch (IOException e) {
      return "unknown";
    }
  }

  private static Optional<String> procLine(Path file, String key) {
    try {
      List<String> lines = Files.readAllLines(file);
      return lines.stream().filter(l -> l.startsWith(key)).map(l -> l.substring(l.indexOf(':') + 1).trim()).findFirst();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private static String fileSystem(Path path) {
    try {
      var store = Files.getFileStore(path);
      return store.type() + " " + store.name();
    } catch (IOException e) {
      return "file system unknown: " + e.getMessage();
    }
  }
}
