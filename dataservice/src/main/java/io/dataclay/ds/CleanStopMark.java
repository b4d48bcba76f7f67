package io.dataclay.ds;

import io.dataclay.common.PrivatePaths;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;

/**
 * A file in the backend directory that says the last stop was clean: every stored object was
 * registered with the Logic Module. It is removed at start, so a crash leaves no mark and the next
 * start re-registers every stored object.
 */
final class CleanStopMark {
  private static final String NAME = "stopped-cleanly";

  private CleanStopMark() {}

  /** Whether the mark was there; removes it (from now on, a crash must be noticed). */
  static boolean consume(Path backendDir) throws IOException {
    return Files.deleteIfExists(backendDir.resolve(NAME));
  }

  /** Leaves the mark (after everything stored was registered). */
  static void leave(Path backendDir) {
    try {
      Files.newByteChannel(backendDir.resolve(NAME), Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE),
          PrivatePaths.FILE).close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
