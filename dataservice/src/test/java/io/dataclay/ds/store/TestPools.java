package io.dataclay.ds.store;

import io.dataclay.common.PrivatePaths;
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

  /** Makes {@code dir} (and its missing parents) mode 0700, as a pool directory must be. */
  public static Path directory(Path dir) {
    try {
      return Files.createDirectories(dir, PrivatePaths.DIRECTORY);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Writes {@code text} to {@code file} (made mode 0600, as the engines make theirs). */
  public static Path writePrivate(Path file, String text) {
    try {
      if (!Files.exists(file)) {
        Files.createFile(file, PrivatePaths.FILE);
      }
      return Files.writeString(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Whether any file under {@code dir} holds {@code bytes} (e.g. a value in clear in a pool file). */
  public static boolean filesContain(Path dir, byte[] bytes) {
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path file : walk.filter(Files::isRegularFile).toList()) {
        if (indexOf(Files.readAllBytes(file), bytes) >= 0) {
          return true;
        }
      }
      return false;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code bytes} repeated {@code times} times. */
  public static byte[] repeated(byte[] bytes, int times) {
    byte[] out = new byte[bytes.length * times];
    for (int i = 0; i < times; i++) {
      System.arraycopy(bytes, 0, out, i * bytes.length, bytes.length);
    }
    return out;
  }

  private static int indexOf(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      if (haystack[i] != needle[0]) {
        continue;
      }
      for (int j = 1; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
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
