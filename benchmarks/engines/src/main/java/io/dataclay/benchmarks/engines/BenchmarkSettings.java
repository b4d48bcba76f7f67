package io.dataclay.benchmarks.engines;

import io.dataclay.ds.store.StoreEngines;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The benchmark's settings, from {@code --key=value} arguments; the only place that reads them.
 *
 * <pre>
 * --pool-dir=DIR        existing directory for the engines' pools (one sub-directory per store, removed after use); required
 * --postgres-url=URL    JDBC URL of the database the postgres engine uses; required when postgres runs
 * --engines=a,b,...     engines to run, in order (default memory,kv,heap,2lm,postgres; memory first: it is the baseline);
 *                       an engine name with the suffix +enc (kv+enc, ...) runs that engine with a store key, values encrypted
 * --pool-size=SIZE      size of each pmem pool (default 2G)
 * --scale=X             multiplies every operation count (default 1)
 * --warmup-rounds=N     untimed rounds before each measurement (default 1)
 * --rounds=N            timed rounds per measurement (default 5)
 * --round-seconds=S     time budget of one round, which caps slow engines (default 1)
 * --seed=N              seed of the random values and access orders (default 42)
 * </pre>
 */
record BenchmarkSettings(Path poolDir, String postgresUrl, List<String> engines, long poolBytes, double scale,
    int warmupRounds, int rounds, double roundSeconds, long seed) {
  /** The engine the others are measured against: it keeps nothing, so it has nothing to encrypt. */
  static final String BASELINE = "memory";

  /** Engines in the order they run by default: the baseline first, then the registry's order. */
  static final List<String> DEFAULT_ENGINES = Stream.concat(Stream.of(BASELINE),
      StoreEngines.names().stream().filter(name -> !name.equals(BASELINE))).toList();

  /** Suffix of an engine name that runs the engine with a store key (field values encrypted). */
  static final String ENCRYPTED = "+enc";

  private static final List<String> KEYS = List.of("pool-dir", "postgres-url", "engines", "pool-size", "scale",
      "warmup-rounds", "rounds", "round-seconds", "seed");

  /**
   * Parses the arguments.
   *
   * @throws IllegalArgumentException naming the argument that is unknown, missing or wrong
   */
  static BenchmarkSettings parse(String... args) {
    Map<String, String> values = new LinkedHashMap<>();
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (!arg.startsWith("--") || eq < 0) {
        throw new IllegalArgumentException("argument '" + arg + "' is not of the form --key=value; keys: " + KEYS);
      }
      String key = arg.substring(2, eq);
      if (!KEYS.contains(key)) {
        throw new IllegalArgumentException("unknown argument --" + key + "; keys: " + KEYS);
      }
      values.put(key, arg.substring(eq + 1));
    }
    String dir = values.get("pool-dir");
    if (dir == null || dir.isBlank()) {
      throw new IllegalArgumentException("--pool-dir is required (an existing directory, e.g. under /dev/shm)");
    }
    Path poolDir = Path.of(dir).toAbsolutePath();
    if (!Files.isDirectory(poolDir) || !Files.isWritable(poolDir)) {
      throw new IllegalArgumentException("--pool-dir " + poolDir + " is not an existing writable directory");
    }
    List<String> engines = engines(values.getOrDefault("engines", String.join(",", DEFAULT_ENGINES)));
    String url = values.get("postgres-url");
    if ((engines.contains("postgres") || engines.contains("postgres" + ENCRYPTED)) && (url == null || url.isBlank())) {
      throw new IllegalArgumentException("--postgres-url is required when the postgres engine runs");
    }
    return new BenchmarkSettings(poolDir, url, engines, size(values.getOrDefault("pool-size", "2G")),
        positive("scale", values.getOrDefault("scale", "1")),
        wholeNumber("warmup-rounds", values.getOrDefault("warmup-rounds", "1"), 0),
        wholeNumber("rounds", values.getOrDefault("rounds", "5"), 1),
        positive("round-seconds", values.getOrDefault("round-seconds", "1")),
        longNumber("seed", values.getOrDefault("seed", "42")));
  }

  /** The store engine an engine name of the benchmark runs ({@code kv} for {@code kv+enc}). */
  static String baseEngine(String engine) {
    return engine.endsWith(ENCRYPTED) ? engine.substring(0, engine.length() - ENCRYPTED.length()) : engine;
  }

  /** Whether an engine name of the benchmark runs its engine with a store key. */
  static boolean encrypted(String engine) {
    return engine.endsWith(ENCRYPTED);
  }

  /** The time budget of one round in nanoseconds. */
  long roundBudgetNanos() {
    return (long) (roundSeconds * 1e9);
  }

  private static List<String> engines(String text) {
    List<String> engines = new ArrayList<>();
    for (String name : text.split(",")) {
      String engine = name.trim();
      if (!StoreEngines.names().contains(baseEngine(engine)) || engine.equals(BASELINE + ENCRYPTED)) {
        throw new IllegalArgumentException("--engines names unknown engine '" + engine + "'; valid engines: "
            + String.join(", ", StoreEngines.names()) + ", each but " + BASELINE + " also with " + ENCRYPTED);
      }
      if (engines.contains(engine)) {
        throw new IllegalArgumentException("--engines names " + engine + " twice");
      }
      engines.add(engine);
    }
    return List.copyOf(engines);
  }

  private static long size(String text) {
    try {
      return StoreConfig.parseSize(text);
    } catch (InvalidArgumentException e) {
      throw new IllegalArgumentException("--pool-size: " + e.getMessage());
    }
  }

  private static double positive(String key, String text) {
    double value;
    try {
      value = Double.parseDouble(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + key + " must be a number, got '" + text + "'");
    }
    if (!(value > 0) || Double.isInfinite(value)) {
      throw new IllegalArgumentException("--" + key + " must be positive, got '" + text + "'");
    }
    return value;
  }

  private static int wholeNumber(String key, String text, int minimum) {
    long value = longNumber(key, text);
    if (value < minimum || value > 1000) {
      throw new IllegalArgumentException("--" + key + " must be between " + minimum + " and 1000, got '" + text + "'");
    }
    return (int) value;
  }

  private static long longNumber(String key, String text) {
    try {
      return Long.parseLong(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + key + " must be a whole number, got '" + text + "'");
    }
  }
}
