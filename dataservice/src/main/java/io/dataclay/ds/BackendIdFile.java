package io.dataclay.ds;

import io.dataclay.common.PrivatePaths;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.UUID;

/**
 * The backend's stable ID in {@code <backend dir>/backend.id}: created on first start (written
 * whole to a temporary file and renamed, so a crash never leaves a partial ID), read afterwards.
 */
public final class BackendIdFile {
  /** File name of the ID inside the backend directory. */
  public static final String NAME = "backend.id";

  private BackendIdFile() {}

  /** The ID kept in {@code backendDir}, created when there is none. */
  public static UUID readOrCreate(Path backendDir) {
    Path file = backendDir.resolve(NAME);
    try {
      if (!Files.exists(file)) {
        PrivatePaths.directory(backendDir, "the backend directory");
        Path tmp = Files.createTempFile(backendDir, NAME, ".tmp"); // mode 0600
        try {
          Files.writeString(tmp, UUID.randomUUID() + "\n", StandardCharsets.US_ASCII);
          Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
        } finally {
          Files.deleteIfExists(tmp);
        }
      }
      String text = Files.readString(file, StandardCharsets.US_ASCII).trim();
      try {
        return UUID.fromString(text);
      } catch (IllegalArgumentException e) {
        throw new InvalidArgumentException(file + " does not hold a backend ID (a UUID): '" + text + "'");
      }
    } catch (IOException e) {
      throw new InternalException("cannot read or create " + file + ": " + e.getMessage());
    }
  }
}
