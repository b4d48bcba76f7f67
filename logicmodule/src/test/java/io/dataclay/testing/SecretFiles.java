package io.dataclay.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/** Cluster secret files as `dataclay start` writes them (mode 0600). */
public final class SecretFiles {
  private SecretFiles() {}

  /** Writes {@code dir}/cluster.secret holding the fixture's secret, readable by its owner only. */
  public static Path write(Path dir) {
    try {
      Files.createDirectories(dir);
      Path file = dir.resolve("cluster.secret");
      Files.writeString(file, "fixture-cluster-secret-0123456789abcdef\n");
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
