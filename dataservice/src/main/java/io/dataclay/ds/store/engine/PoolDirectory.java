package io.dataclay.ds.store.engine;

import io.dataclay.common.PrivatePaths;
import io.dataclay.ds.store.crypt.KeyAdmission;
import io.dataclay.ds.store.crypt.StoreKey;
import io.dataclay.exceptions.InvalidArgumentException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.stream.Stream;

/**
 * A store's pool directory, claimed by one engine in one process. The directory records which
 * engine made it (the {@value #MARKER} file) so that another engine refuses it instead of
 * overwriting it, and an exclusive lock on {@value #LOCK} keeps a second store (in this process or
 * another) from opening it while it is in use. The lock dies with the process, so a killed Data
 * Service does not leave its pool locked.
 *
 * <p>A pool made with a store key also records a key check in the marker ({@code key-check ...},
 * second line; see {@link StoreKey}): the pool is then opened only with that key, and one made
 * without a key only without one ({@link KeyAdmission}). The marker is read before the pool
 * file is opened, so a refused open changes nothing in the directory.
 *
 * <p>The directory and everything in it are this user's alone: it is made mode 0700 and its files
 * 0600, and one that another user owns or could reach (or a file in it), or that sits where another
 * user could replace it, is refused before anything in it is read or written ({@link PrivatePaths}).
 */
public final class PoolDirectory implements AutoCloseable {
  /** File naming the engine that made the directory. */
  public static final String MARKER = "ENGINE";
  /** File locked while a store has the directory open. */
  public static final String LOCK = "pool.lock";

  private static final String MARKER_TEMP = ".ENGINE.tmp";
  private static final String KEY_CHECK = "key-check ";
  private static final Set<String> OWN_FILES = Set.of(MARKER, LOCK, MARKER_TEMP);
  private static final Set<StandardOpenOption> LOCK_OPEN = Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE);

  /** What the marker says: the engine that made the pool, and its key check (null: not encrypted). */
  private record Marker(String engine, String keyCheck) {}

  private final Path path;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private boolean encrypted;

  private PoolDirectory(Path path, FileChannel lockChannel, FileLock lock) {
    this.path = path;
    this.lockChannel = lockChannel;
    this.lock = lock;
  }

  /** Claims {@code dir} for {@code engine} without a store key (see {@link #claim(Path, String, StoreKey)}). */
  public static PoolDirectory claim(Path dir, String engine) {
    return claim(dir, engine, null);
  }

  /**
   * Claims {@code dir} for {@code engine} with {@code key} (null: none): creates it when missing,
   * refuses a path that is not a writable directory, a directory made by another engine, a
   * non-empty directory that is not a pool, a pool that another store has open, an encrypted pool
   * without its key or with another, and a pool made without a key when a key is given. Nothing in
   * the directory is changed on refusal, nor is one another user owns or could reach (see the class
   * doc). A new directory records the engine and the key's check.
   *
   * @throws InvalidArgumentException naming the directory and what is wrong with it
   */
  public static PoolDirectory claim(Path dir, String engine, StoreKey key) {
    if (dir == null) {
      throw new InvalidArgumentException("the " + engine + " engine needs a pool directory, and none was given");
    }
    Path path = dir.toAbsolutePath().normalize();
    if (Files.exists(path, LinkOption.NOFOLLOW_LINKS) && !Files.isDirectory(path)) {
      throw new InvalidArgumentException("pool path " + path + " exists and is not a directory");
    }
    PrivatePaths.directory(path, "pool directory");
    PrivatePaths.checkTree(path, "pool directory");
    if (!Files.isWritable(path)) {
      throw new InvalidArgumentException("pool directory " + path + " is not writable");
    }
    Marker before = checkMarker(path, engine); // before anything is created in a directory that is refused
    admit(path, before, key);
    FileChannel channel;
    try {
      channel = FileChannel.open(path.resolve(LOCK), LOCK_OPEN, PrivatePaths.FILE);
    } catch (IOException e) {
      throw new InvalidArgumentException("pool directory " + path + " is not writable: " + describe(e));
    }
    try {
      PoolDirectory claimed = new PoolDirectory(path, channel, tryLock(channel, path));
      claimed.checkOrWriteMarker(engine, key); // again under the lock: another process may have made it meanwhile
      return claimed;
    } catch (RuntimeException e) {
      closeQuietly(channel); // also releases the lock
      throw e;
    }
  }

  /** The directory (absolute). */
  public Path path() {
    return path;
  }

  /** A file inside the directory. */
  public Path resolve(String name) {
    return path.resolve(name);
  }

  /** Whether the pool was made with a store key (its values are encrypted). */
  public boolean encrypted() {
    return encrypted;
  }

  /** Releases the directory so another store may open it. */
  @Override
  public void close() {
    try {
      lock.release();
    } catch (IOException e) {
      // The channel close below drops the lock anyway.
    } finally {
      closeQuietly(lockChannel);
    }
  }

  /**
   * Erases the pool directory {@code dir} made by {@code engine}: overwrites every file in it with
   * zeros and syncs it, then deletes the files and the directory. Needs no key. Refuses a
   * directory made by another engine, one that is not a pool, and a pool that a store has open;
   * nothing is changed then. Returns what it erased, or null when {@code dir} does not exist.
   *
   * <p>A crash part way leaves some files zeroed and the marker in place, so erasing again
   * finishes the job. Zeros reach the same pages on tmpfs and on a DAX mount; a file system that
   * writes elsewhere (copy-on-write, or an SSD remapping blocks) may keep old copies out of reach.
   *
   * @throws InvalidArgumentException naming the directory and why it was not erased
   */
  public static String erase(Path dir, String engine) {
    Path path = dir.toAbsolutePath().normalize();
    if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
      return null;
    }
    if (!Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
      throw new InvalidArgumentException("pool path " + path + " is not a directory; not erased");
    }
    checkMarker(path, engine); // refuses what is not a pool of this engine, whatever key it has
    try (FileChannel channel = FileChannel.open(path.resolve(LOCK), LOCK_OPEN, PrivatePaths.FILE)) {
      tryLock(channel, path); // released when the channel closes
      return PoolEraser.overwriteAndDelete(path, Set.of(MARKER, LOCK));
    } catch (IOException e) {
      throw new InvalidArgumentException("cannot erase pool directory " + path + ": " + describe(e));
    }
  }

  private static FileLock tryLock(FileChannel channel, Path path) {
    FileLock lock;
    try {
      lock = channel.tryLock();
    } catch (OverlappingFileLockException e) {
      throw new InvalidArgumentException("pool directory " + path + " is already open in this process");
    } catch (IOException e) {
      throw new InvalidArgumentException("cannot lock pool directory " + path + ": " + describe(e));
    }
    if (lock == null) {
      throw new InvalidArgumentException("pool directory " + path + " is in use by another process");
    }
    return lock;
  }

  /**
   * Refuses a directory made by another engine, or one with files that is not a pool; returns its
   * marker, or null when the directory holds no pool yet.
   */
  private static Marker checkMarker(Path path, String engine) {
    Path marker = path.resolve(MARKER);
    if (Files.exists(marker)) {
      Marker found = readMarker(marker);
      if (!found.engine().equals(engine)) {
        throw new InvalidArgumentException("pool directory " + path + " was made by the '" + found.engine()
            + "' engine and cannot be opened with '" + engine + "'; choose another directory or that engine");
      }
      return found;
    }
    try (Stream<Path> entries = Files.list(path)) {
      if (entries.anyMatch(p -> !OWN_FILES.contains(p.getFileName().toString()))) {
        throw new InvalidArgumentException(
            "directory " + path + " is not empty and is not a dataClay pool; refusing to use it");
      }
    } catch (IOException e) {
      throw new InvalidArgumentException("cannot list pool directory " + path + ": " + describe(e));
    }
    return null;
  }

  private static KeyAdmission.Admitted admit(Path path, Marker marker, StoreKey key) {
    return KeyAdmission.admit(key, marker == null ? null : marker.keyCheck(), marker == null, "pool directory " + path);
  }

  private void checkOrWriteMarker(String engine, StoreKey key) {
    Marker found = checkMarker(path, engine);
    KeyAdmission.Admitted admitted = admit(path, found, key);
    encrypted = admitted.encrypted();
    if (found != null) {
      return;
    }
    Path marker = path.resolve(MARKER);
    // Written to a temporary name and renamed, so a crash leaves no marker or a whole one: a pool
    // is recorded as encrypted before anything is written to it, or not recorded at all.
    Path temp = path.resolve(MARKER_TEMP);
    String text = engine + "\n" + (admitted.checkToRecord() == null ? "" : KEY_CHECK + admitted.checkToRecord() + "\n");
    try {
      try (FileChannel out = FileChannel.open(temp, Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING, LinkOption.NOFOLLOW_LINKS), PrivatePaths.FILE)) {
        ByteBuffer bytes = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
        while (bytes.hasRemaining()) {
          out.write(bytes);
        }
      }
      try {
        Files.move(temp, marker, StandardCopyOption.ATOMIC_MOVE);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(temp, marker);
      }
    } catch (IOException e) {
      throw new InvalidArgumentException("cannot write pool marker " + marker + ": " + describe(e));
    }
  }

  private static Marker readMarker(Path marker) {
    String text;
    try {
      text = Files.readString(marker, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new InvalidArgumentException("cannot read pool marker " + marker + ": " + describe(e));
    }
    String[] lines = text.strip().split("\n");
    String keyCheck = null;
    for (int i = 1; i < lines.length; i++) {
      String line = lines[i].strip();
      if (line.startsWith(KEY_CHECK) && keyCheck == null) {
        keyCheck = line.substring(KEY_CHECK.length()).strip();
      } else if (!line.isEmpty()) {
        throw new InvalidArgumentException("pool marker " + marker + " has a line this build does not understand ('"
            + line + "'); it was left untouched");
      }
    }
    return new Marker(lines[0].strip(), keyCheck);
  }

  private static void closeQuietly(FileChannel channel) {
    try {
      channel.close();
    } catch (IOException e) {
      // Nothing more can be done; the lock goes with the process at the latest.
    }
  }

  private static String describe(Exception e) {
    return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : " " + e.getMessage());
  }
}
