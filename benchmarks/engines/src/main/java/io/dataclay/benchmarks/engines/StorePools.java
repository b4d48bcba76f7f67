package io.dataclay.benchmarks.engines;

import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.ds.store.StoreConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Opens each measured store on a pool directory of its own under the benchmark's pool directory
 * (and a backend name of its own in the postgres database), and removes the pool when the store
 * is closed, so that /dev/shm never holds more than one store's pool at a time. An engine named
 * with {@link BenchmarkSettings#ENCRYPTED} runs with a store key: a random key in an owner-only
 * file in the pool directory, made for the run and deleted when the JVM exits.
 */
final class StorePools {
  private final BenchmarkSettings settings;
  private final String runTag = Long.toString(ProcessHandle.current().pid());
  private Path keyFile;

  /** Pools as {@code settings} say (directory, pool size, database URL). */
  StorePools(BenchmarkSettings settings) {
    this.settings = settings;
  }

  /** An open store of {@code engine} on a fresh pool named after {@code purpose}; close it with {@link #close}. */
  Opened open(String engine, String purpose) {
    String name = engine + "-" + purpose.replaceAll("[^A-Za-z0-9]+", "");
    Path path = settings.poolDir().resolve(name);
    if (Files.exists(path)) {
      throw new IllegalStateException("pool directory " + path + " is left over from an earlier run; remove it");
    }
    // The 2lm cache and checkpoint period stay at their defaults (256 MiB, 1000 ms).
    String base = BenchmarkSettings.baseEngine(engine);
    // Engines that use no database ignore its URL.
    StoreConfig config = new StoreConfig(base, path, settings.poolBytes()).withBackend("bench-" + runTag + "-" + name)
        .withDatabaseUrl(settings.postgresUrl());
    if (BenchmarkSettings.encrypted(engine)) {
      config = config.withKeyFile(keyFile());
    }
    try {
      return new Opened(ObjectStores.open(config), path);
    } catch (RuntimeException e) {
      delete(path);
      throw e;
    }
  }

  private synchronized Path keyFile() {
    if (keyFile == null) {
      byte[] key = new byte[32];
      new SecureRandom().nextBytes(key);
      try {
        keyFile = Files.createTempFile(settings.poolDir(), "bench-", ".key",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.write(keyFile, key);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write the benchmark's store key file", e);
      }
      keyFile.toFile().deleteOnExit();
    }
    return keyFile;
  }

  /** A store and its pool directory; closing closes the store and deletes the pool. */
  record Opened(ObjectStore store, Path path) implements AutoCloseable {
    /** Closes the store (2lm writes its cache back here, outside any measurement), then deletes its pool. */
    @Override
    public void close() {
      try {
        store.close();
      } finally {
        delete(path);
      }
    }
  }

  private static void delete(Path path) {
    if (!Files.exists(path)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(path)) {
      List<Path> all = walk.sorted(Comparator.reverseOrder()).toList();
      for (Path p : all) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove pool " + path, e);
    }
  }
}
