package io.dataclay.ds.deployment;

import io.dataclay.common.PrivatePaths;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Writes model files under one directory (the Python environment's import path), files mode 0600 in
 * directories 0700: model code is its tenant's, not for other users of the node. Each file is
 * written whole to a temporary file and renamed into place, so a reader (or a crash) sees the old
 * content or the new, never a partial file. Paths that are absolute, contain "..", or would
 * resolve outside the directory are refused before anything is written. Deleting a module also
 * deletes what Python compiled from it ({@code __pycache__}), so no copy of removed code stays.
 */
public final class ModelFiles {
  private static final String PYCACHE = "__pycache__";

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

  /**
   * Deletes {@code target} (from {@link #target}), its compiled forms, and the directories this
   * leaves empty; a file already gone is fine.
   */
  public void delete(Path target) {
    try {
      Path dir = target.getParent();
      if (!Files.isDirectory(dir)) {
        return;
      }
      if (!dir.toRealPath().startsWith(root.toRealPath())) {
        throw new InvalidArgumentException("model path " + root.relativize(target) + " leads outside the models directory");
      }
      Files.deleteIfExists(target);
      String name = target.getFileName().toString();
      if (name.endsWith(".py")) {
        deleteCompiled(dir.resolve(PYCACHE), name.substring(0, name.length() - 3) + ".");
      }
      removeEmptyUpFrom(dir.resolve(PYCACHE));
    } catch (IOException e) {
      throw new InternalException("could not delete model file " + target + ": " + e.getMessage());
    }
  }

  /**
   * Deletes every file under the directory that is not one of {@code keep} (absolute targets) or
   * compiled from one of them, and the directories left empty: what models removed or withdrawn
   * while this backend was down left behind.
   *
   * @return the files deleted, relative to the directory
   */
  public List<String> retainOnly(Set<Path> keep) {
    if (!Files.isDirectory(root)) {
      return List.of();
    }
    List<Path> files;
    try (Stream<Path> walk = Files.walk(root)) {
      files = walk.filter(Files::isRegularFile).toList();
    } catch (IOException e) {
      throw new InternalException("could not list the models directory " + root + ": " + e.getMessage());
    }
    List<String> deleted = new ArrayList<>();
    for (Path f : files) {
      if (!keep.contains(f) && !keep.contains(sourceOf(f))) {
        try {
          Files.deleteIfExists(f);
          deleted.add(root.relativize(f).toString());
          removeEmptyUpFrom(f.getParent());
        } catch (IOException e) {
          throw new InternalException("could not delete stale model file " + f + ": " + e.getMessage());
        }
      }
    }
    return deleted;
  }

  // "pkg/__pycache__/mod.cpython-311.pyc" was compiled from "pkg/mod.py"; any other file from itself.
  private static Path sourceOf(Path file) {
    Path dir = file.getParent();
    String name = file.getFileName().toString();
    if (dir == null || !dir.getFileName().toString().equals(PYCACHE) || name.indexOf('.') < 0) {
      return file;
    }
    return dir.getParent().resolve(name.substring(0, name.indexOf('.')) + ".py");
  }

  private static void deleteCompiled(Path cache, String prefix) throws IOException {
    if (!Files.isDirectory(cache)) {
      return;
    }
    try (Stream<Path> entries = Files.list(cache)) {
      for (Path p : entries.filter(p -> p.getFileName().toString().startsWith(prefix)).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  // Stops at the models directory itself and at the first directory that is not empty.
  private void removeEmptyUpFrom(Path dir) throws IOException {
    for (Path d = dir.normalize(); d.startsWith(root) && !d.equals(root); d = d.getParent()) {
      if (!Files.isDirectory(d)) {
        continue;
      }
      try (Stream<Path> entries = Files.list(d)) {
        if (entries.findAny().isPresent()) {
          return;
        }
      }
      try {
        Files.deleteIfExists(d);
      } catch (DirectoryNotEmptyException e) {
        return; // the environment compiled something into it meanwhile: it stays
      }
    }
  }
}
