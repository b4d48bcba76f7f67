package io.dataclay.benchmarks.engines;

import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.ds.store.StoreConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Opens each measured store on a pool directory of its own under the benchmark's pool directory
 * (and a backend name of its own in the postgres database), and removes the pool when the store
 * is closed, so that /dev/shm never holds more than one store's pool at a time.
 */
final class StorePools {
  private final BenchmarkSettings settings;
  private final String runTag = Long.toString(ProcessHandle.current().pid());

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
    StoreConfig config = new StoreConfig(engine, path, settings.poolBytes()).withBackend("bench-" + runTag + "-" + name);
    if (engine.equals("postgres")) {
      config = config.withDatabaseUrl(settings.postgresUrl());
    }
    try {
      return new Opened(ObjectStores.open(config), path);
    } catch (RuntimeException e) {
      delete(path);
      throw e;
    }
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
