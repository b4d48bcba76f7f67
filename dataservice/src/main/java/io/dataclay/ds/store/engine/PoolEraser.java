package io.dataclay.ds.store.engine;

import io.dataclay.exceptions.InvalidArgumentException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** Overwrites a pool directory's files with zeros, syncs them, then deletes them and the directory. */
final class PoolEraser {
  private static final int CHUNK = 1 << 20;

  private PoolEraser() {}

  /**
   * Erases every file of {@code dir} (the names in {@code last} are deleted after the others, so an
   * interrupted erasure leaves the directory recognisable as a pool); returns what was erased.
   *
   * @throws InvalidArgumentException when {@code dir} holds a sub-directory (no pool has one)
   * @throws IOException when a file cannot be written or deleted
   */
  static String overwriteAndDelete(Path dir, Set<String> last) throws IOException {
    List<Path> files = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path entry : entries) {
        if (Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS)) {
          throw new InvalidArgumentException("pool directory " + dir + " holds the directory " + entry.getFileName()
              + ", which no pool has; nothing was erased");
        }
        files.add(entry);
      }
    }
    long bytes = 0;
    for (Path file : files) {
      if (Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
        bytes += overwrite(file);
      }
    }
    files.sort((a, b) -> Boolean.compare(last.contains(a.getFileName().toString()), last.contains(b.getFileName().toString())));
    for (Path file : files) {
      Files.deleteIfExists(file);
    }
    Files.deleteIfExists(dir);
    return "pool directory " + dir + ": " + files.size() + " file(s), " + bytes + " bytes overwritten with zeros and removed";
  }

  /** Writes zeros over the whole of {@code file} and syncs it; returns its size. */
  private static long overwrite(Path file) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
      long size = channel.size();
      ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(CHUNK, Math.max(size, 1)));
      long at = 0;
      while (at < size) {
        zeros.clear().limit((int) Math.min(zeros.capacity(), size - at));
        at += channel.write(zeros, at);
      }
      channel.force(true);
      return size;
    }
  }
}
