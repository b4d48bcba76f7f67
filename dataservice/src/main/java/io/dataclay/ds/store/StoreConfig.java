package io.dataclay.ds.store;

import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Which store engine a Data Service runs and where, with what each engine needs. The Data Service
 * reads these from its configuration and hands them over; nothing here reads the environment. The
 * keys of the engine-specific parts are here, beside the parts they fill; each engine lists those
 * it reads ({@link StoreEngine#settings()}).
 *
 * @param engine kv | heap | 2lm | postgres | memory
 * @param path the pool directory; engines that keep nothing on disk ignore it and accept null
 * @param sizeBytes the pool size used when the pool is created; an existing pool keeps its size
 * @param backendName the backend this store belongs to (postgres keeps each backend's objects apart by it)
 * @param databaseUrl postgres: JDBC URL of the database (required there, ignored elsewhere)
 * @param cacheBytes 2lm: bytes of DRAM for the object cache
 * @param checkpointMillis 2lm: milliseconds between checkpoints (what a crash can lose)
 * @param keyFile the file of the key that encrypts field values (kv, heap, 2lm, postgres); null: no encryption
 */
public record StoreConfig(String engine, Path path, long sizeBytes, String backendName, String databaseUrl,
    long cacheBytes, long checkpointMillis, Path keyFile) {
  /** Backend name used when none is given (single-backend tools and tests). */
  public static final String DEFAULT_BACKEND = "default";
  /** Default DRAM of the 2lm cache: 256 MiB. */
  public static final long DEFAULT_CACHE_BYTES = 256L << 20;
  /** Default 2lm checkpoint period: 1000 ms. */
  public static final long DEFAULT_CHECKPOINT_MILLIS = 1000;

  /** The key of {@link #databaseUrl()}: postgres' JDBC URL. */
  public static final Setting DATABASE_URL = new Setting("DATACLAY_STORE_URL", "",
      "postgres engine: JDBC URL of its database, e.g. jdbc:postgresql://127.0.0.1:5432/dataclay?user=postgres;"
          + " required for that engine; messages show it with the password hidden.");
  /** The key of {@link #cacheBytes()}: 2lm's DRAM cache. */
  public static final Setting CACHE_SIZE = new Setting("DATACLAY_2LM_CACHE_SIZE", "256M",
      "2lm engine: DRAM for its object cache, e.g. 256M; dirty records up to this size wait in DRAM for a checkpoint.");
  /** The key of {@link #checkpointMillis()}: 2lm's checkpoint period. */
  public static final Setting CHECKPOINT_MS = new Setting("DATACLAY_2LM_CHECKPOINT_MS",
      Long.toString(DEFAULT_CHECKPOINT_MILLIS),
      "2lm engine: milliseconds between checkpoints; a crash loses the writes of the last this many ms.");

  private static final Pattern URL_PASSWORD = Pattern.compile("(?i)(password=)[^&;]*");
  private static final Pattern URL_USER_INFO = Pattern.compile("//([^/@:]*):[^/@]*@");

  /** Checks every part; a bad value fails here, naming it. */
  public StoreConfig {
    if (engine == null || engine.isBlank()) {
      throw new InvalidArgumentException("store engine name is missing; valid engines: " + String.join(", ", StoreEngines.names()));
    }
    if (sizeBytes <= 0) {
      throw new InvalidArgumentException("store size must be positive, got " + sizeBytes + " bytes");
    }
    if (backendName == null || backendName.isBlank()) {
      throw new InvalidArgumentException("store backend name is missing");
    }
    if (cacheBytes <= 0) {
      throw new InvalidArgumentException("2lm cache size must be positive, got " + cacheBytes + " bytes");
    }
    if (checkpointMillis <= 0) {
      throw new InvalidArgumentException("2lm checkpoint period must be positive, got " + checkpointMillis + " ms");
    }
  }

  /** An engine on a pool with every other part at its default (backend "default", no database). */
  public StoreConfig(String engine, Path path, long sizeBytes) {
    this(engine, path, sizeBytes, DEFAULT_BACKEND, null, DEFAULT_CACHE_BYTES, DEFAULT_CHECKPOINT_MILLIS, null);
  }

  /** This configuration for backend {@code name}. */
  public StoreConfig withBackend(String name) {
    return new StoreConfig(engine, path, sizeBytes, name, databaseUrl, cacheBytes, checkpointMillis, keyFile);
  }

  /** This configuration with the postgres engine's database URL. */
  public StoreConfig withDatabaseUrl(String url) {
    return new StoreConfig(engine, path, sizeBytes, backendName, url, cacheBytes, checkpointMillis, keyFile);
  }

  /** This configuration with the 2lm engine's cache size and checkpoint period. */
  public StoreConfig withCache(long bytes, long checkpointMs) {
    return new StoreConfig(engine, path, sizeBytes, backendName, databaseUrl, bytes, checkpointMs, keyFile);
  }

  /** This configuration with the file of the key that encrypts field values (null: none). */
  public StoreConfig withKeyFile(Path file) {
    return new StoreConfig(engine, path, sizeBytes, backendName, databaseUrl, cacheBytes, checkpointMillis, file);
  }

  /** The database URL with any password replaced by {@code ***}, fit for messages and logs; "" when none. */
  public String redactedDatabaseUrl() {
    return redact(databaseUrl);
  }

  /** {@code url} with any password replaced by {@code ***}; "" for null. */
  public static String redact(String url) {
    if (url == null) {
      return "";
    }
    return URL_USER_INFO.matcher(URL_PASSWORD.matcher(url).replaceAll("$1***")).replaceAll("//$1:***@");
  }

  /** Shows every part, the database password hidden. */
  @Override
  public String toString() {
    return "StoreConfig[engine=" + engine + ", path=" + path + ", sizeBytes=" + sizeBytes + ", backendName="
        + backendName + ", databaseUrl=" + redactedDatabaseUrl() + ", cacheBytes=" + cacheBytes
        + ", checkpointMillis=" + checkpointMillis + ", keyFile=" + keyFile + "]";
  }

  /**
   * Parses a size such as {@code 512M}, {@code 4G}, {@code 64KiB} or {@code 1048576} (bytes);
   * suffixes K, M, G, T are powers of 1024, case-insensitive, optionally followed by B or iB.
   *
   * @throws InvalidArgumentException naming the text when it is not a positive whole size
   */
  public static long parseSize(String text) {
    if (text == null || text.isBlank()) {
      throw new InvalidArgumentException("store size is empty; expected e.g. 512M, 4G or a byte count");
    }
    String s = text.trim().toUpperCase(Locale.ROOT);
    if (s.endsWith("IB")) {
      s = s.substring(0, s.length() - 2);
    } else if (s.endsWith("B")) {
      s = s.substring(0, s.length() - 1);
    }
    int shift = 0;
    if (!s.isEmpty()) {
      switch (s.charAt(s.length() - 1)) {
        case 'K' -> shift = 10;
        case 'M' -> shift = 20;
        case 'G' -> shift = 30;
        case 'T' -> shift = 40;
        default -> shift = 0;
      }
    }
    String digits = shift == 0 ? s : s.substring(0, s.length() - 1);
    if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw new InvalidArgumentException(
          "store size '" + text + "' is not a whole number of bytes with an optional K, M, G or T suffix (e.g. 512M)");
    }
    long number;
    try {
      number = Long.parseLong(digits);
    } catch (NumberFormatException e) {
      throw new InvalidArgumentException("store size '" + text + "' is too large");
    }
    if (number == 0) {
      throw new InvalidArgumentException("store size '" + text + "' must be positive");
    }
    if (number > (Long.MAX_VALUE >> shift)) {
      throw new InvalidArgumentException("store size '" + text + "' is too large");
    }
    return number << shift;
  }
}
