package io.dataclay.ds.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;

/** Store key files for tests: owner-only temporary files, each holding a fresh random key. */
public final class TestKeys {
  private static final SecureRandom RANDOM = new SecureRandom();

  private TestKeys() {}

  /** A new key file (mode 0600) holding a fresh random 256-bit key as hex text. */
  public static Path newKeyFile() {
    byte[] key = new byte[32];
    RANDOM.nextBytes(key);
    return keyFile((HexFormat.of().formatHex(key) + "\n").getBytes(), "rw-------");
  }

  /** A new file holding {@code content} with {@code permissions} (e.g. "rw-r--r--"). */
  public static Path keyFile(byte[] content, String permissions) {
    try {
      Path file = Files.createTempFile("dataclay-test-key", ".key",
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      Files.write(file, content);
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(permissions));
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Deletes a key file made here, if present. */
  public static void delete(Path file) {
    try {
      if (file != null) {
        Files.deleteIfExists(file);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
