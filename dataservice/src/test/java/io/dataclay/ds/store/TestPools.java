package io.dataclay.ds.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.UUID;
import java.util.stream.Stream;

/** Unique pool directories under /dev/shm (DRAM-backed, as pmem is emulated) for tests. */
public final class TestPools {
  private TestPools() {}

  /** A path for a pool directory that does not exist yet. */
  public static Path newPath() {
    return Path.of("/dev/shm", "dataclay-store-test-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID());
  }

  /** Removes {@code path} and everything under it, if present. */
  public static void delete(Path path) {
    if (path == null || !Files.exists(path)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(path)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
