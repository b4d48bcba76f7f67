package io.dataclay.ds.snapshot;

import io.dataclay.exceptions.InternalException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * The durable list of the objects an import staged on this backend,
 * {@code <backend dir>/imports/<import ID>.staged}: a header line, then one object ID per line,
 * each batch synced before its objects are stored, and {@code PREPARED} once the Logic Module
 * began committing. So after a crash every staged object is listed (a torn last line names an
 * object that was never stored), and the file says whether the backend may drop them on its own.
 */
final class StagingFile implements AutoCloseable {
  static final String SUFFIX = ".staged";
  private static final String HEADER = "dataclay-import-staging 1 ";
  private static final String PREPARED = "PREPARED";

  /** What a staging file holds. */
  record Contents(String importId, Set<UUID> ids, boolean prepared) {}

  private final Path path;
  private final FileChannel channel;

  private StagingFile(Path path, FileChannel channel) {
    this.path = path;
    this.channel = channel;
  }

  /** Creates the list of import {@code importId} in {@code dir} (made 0700 when missing). */
  static StagingFile create(Path dir, String importId) {
    try {
      if (!Files.isDirectory(dir)) {
        Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      }
      Path path = dir.resolve(importId + SUFFIX);
      FileChannel ch = FileChannel.open(path, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      StagingFile file = new StagingFile(path, ch);
      file.write(HEADER + importId + "\n");
      return file;
    } catch (IOException e) {
      throw new InternalException("cannot create the staging list of import " + importId + " in " + dir + ": "
          + e.getMessage());
    }
  }

  /** Appends {@code ids} and syncs them: call before storing those objects. */
  void append(List<UUID> ids) {
    StringBuilder lines = new StringBuilder(ids.size() * 37);
    for (UUID id : ids) {
      lines.append(id).append('\n');
    }
    write(lines.toString());
  }

  /** Records (durably) that the Logic Module began committing: the objects stay until it says how that ended. */
  void markPrepared() {
    write(PREPARED + "\n");
  }

  /** Removes the list (the import ended here). */
  void delete() {
    close();
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      throw new InternalException("cannot remove " + path + ": " + e.getMessage());
    }
  }

  @Override
  public void close() {
    try {
      channel.close();
    } catch (IOException ignored) {
      // nothing left to write
    }
  }

  /** The import ID of a staging list file name, or null when the name is not one. */
  static String importIdOf(Path file) {
    String name = file.getFileName().toString();
    return name.endsWith(SUFFIX) ? name.substring(0, name.length() - SUFFIX.length()) : null;
  }

  /** Reads a list a crash may have left; a torn last line is ignored. */
  static Contents read(Path file) throws IOException {
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    if (lines.isEmpty() || !lines.get(0).startsWith(HEADER)) {
      throw new IOException(file + " is not an import staging list");
    }
    String importId = lines.get(0).substring(HEADER.length()).trim();
    Set<UUID> ids = new HashSet<>();
    boolean prepared = false;
    for (String line : lines.subList(1, lines.size())) {
      if (line.equals(PREPARED)) {
        prepared = true;
      } else if (line.length() == 36) {
        try {
          ids.add(UUID.fromString(line));
        } catch (IllegalArgumentException torn) {
          // an interrupted append: its object was not stored (the line is synced first)
        }
      }
    }
    return new Contents(importId, ids, prepared);
  }

  private void write(String text) {
    try {
      ByteBuffer bytes = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
      while (bytes.hasRemaining()) {
        channel.write(bytes);
      }
      channel.force(false);
    } catch (IOException e) {
      throw new InternalException("cannot write the staging list " + path + ": " + e.getMessage());
    }
  }
}
