package io.dataclay.common;

import io.dataclay.exceptions.InvalidArgumentException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;

/** Reads a secret from a file that only its owner may read or write (the cluster secret, the metrics token). */
public final class OwnerOnlyFile {
  private static final Set<PosixFilePermission> OTHERS = EnumSet.of(
      PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
      PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

  private OwnerOnlyFile() {}

  /**
   * The text of {@code file}, named by setting {@code key} in messages.
   *
   * @throws InvalidArgumentException naming the file and what is wrong with it: missing, not a
   *     regular file (a link is refused), or readable or writable by group or others
   */
  public static String read(String key, Path file) {
    try {
      if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
        throw new InvalidArgumentException(key + ": " + file + " is not a regular file");
      }
      Set<PosixFilePermission> open = EnumSet.copyOf(Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS));
      open.retainAll(OTHERS);
      if (!open.isEmpty()) {
        throw new InvalidArgumentException(key + ": " + file + " may be read or written by others " + open
            + "; make it readable by its owner only (chmod 600)");
      }
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException | UnsupportedOperationException e) {
      throw new InvalidArgumentException(key + ": cannot read " + file + ": " + e.getMessage());
    }
  }
}
