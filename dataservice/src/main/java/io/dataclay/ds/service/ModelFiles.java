package io.dataclay.ds.service;

import io.dataclay.common.PrivatePaths;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Writes model files under one directory (the Python environment's import path), files mode 0600 in
 * directories 0700: model code is its tenant's, not for other users of the node. Each file is
 * written whole to a temporary file and renamed into place, so a reader (or a crash) sees the old
 * content or the new, never a partial file. Paths that are absolute, contain "..", or would
 * resolve outside the directory are refused before anything is written.
 */
public final class ModelFiles {
  private final Path root;

  /** Files under {@code root} (created on first write). */
  public ModelFiles(Path root) {
    this.root = root.toAbsolutePath().normalize();
  }

  /**
   * The absolute target of a relative model path.
   *
   * @param field the request field named in the error, e.g. "models[0].files[1].path"
   * @throws InvalidArgumentException when the path is empty, absolute, has "..", or leaves the directory
   */
  public Path target(String relative, String field) {
    if (relative == null || relative.isEmpty()) {
      throw new InvalidArgumentException(field + " is empty");
    }
    if (relative.indexOf('\0') >= 0 || relative.startsWith("/") || relative.startsWith("\\")) {
      throw new InvalidArgumentException(field + " must be a relative path, not " + relative);
    }
    Path rel;
    try {
      rel = Path.of(relative);
    } catch (InvalidPathException e) {
      throw new InvalidArgumentException(field + " is not a valid path: " + relative);
    }
    for (Path part : rel) {
      String name = part.toString();
      if (name.equals("..") || name.equals(".") || name.isEmpty()) {
        throw new InvalidArgumentException(field + " must not contain '" + name + "': " + relative);
      }
    }
    Path target = root.resolve(rel).normalize();
    if (rel.isAbsolute() || !target.startsWith(root) || target.equals(root)) {
      throw new InvalidArgumentException(field + " escapes the models directory: " + relative);
    }
    return target;
  }

  /** Replaces {@code target} (from {@link #target}) with {@code content}; durable and whole when it returns. */
  public void write(Path target, byte[] content) {
    try {
      Path dir = target.getParent();
      Files.createDirectories(dir, PrivatePaths.DIRECTORY);
      if (!dir.toRealPath().startsWith(root.toRealPath())) {
        throw new InvalidArgumentException("model path " + root.relativize(target) + " leads outside the models directory");
      }
      Path tmp = Files.createTempFile(dir, ".deploy-", ".tmp"); // mode 0600, kept by the rename
      try {
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
          ByteBuffer buf = ByteBuffer.wrap(content);
          while (buf.hasRemaining()) {
            ch.write(buf);
          }
          ch.force(true);
        }
        // Same directory, so the rename is atomic: readers see the old file or the new one.
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } finally {
        Files.deleteIfExists(tmp);
      }
    } catch (IOException e) {
      throw new InternalException("could not write model file " + target + ": " + e.getMessage());
    }
  }
}
