package io.dataclay.common;

import io.dataclay.exceptions.InvalidArgumentException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Paths that belong to the server's user: directories mode 0700 and files 0600, owned by the user
 * this process runs as. Both servers make or check here every directory they keep state in (the
 * cluster home, the metadata database's directory, the backend directory, each pool), also when
 * no launcher checked it first. A path another user owns, that group or others may reach, or that
 * is a symbolic link another user owns, is refused with a message naming it, its owner and mode,
 * and what to run; nothing is tightened silently, since what another user could reach may already
 * have been read or replaced. The directories above need only be safe from replacement: owned by
 * root or this user, and writable by others only when sticky (as /tmp and /dev/shm are). The
 * launcher's checks are the same (pyclay {@code dataclay._internal.private_paths}).
 */
public final class PrivatePaths {
  /** Mode 0700, for {@code Files.createDirectory}: the umask can only take bits away. */
  public static final FileAttribute<Set<PosixFilePermission>> DIRECTORY =
      PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
  /** Mode 0600, for {@code Files.createFile} and {@code FileChannel.open}. */
  public static final FileAttribute<Set<PosixFilePermission>> FILE =
      PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

  private static final int TYPE = 0170000;
  private static final int IS_DIRECTORY = 0040000;
  private static final int IS_LINK = 0120000;
  private static final int IS_FILE = 0100000;
  private static final int STICKY = 01000;
  private static final int OTHERS = 077;
  private static final int OTHERS_WRITE = 022;
  private static final int SHOWN = 8;
  private static final int UID = processUid();

  private PrivatePaths() {}

  /**
   * Makes directory {@code dir} (and any missing parent) mode 0700, or checks the one there, and
   * checks the directories above it (see the class doc). Returns {@code dir}.
   *
   * @param what how the message names the directory, e.g. "DATACLAY_HOME"
   * @throws InvalidArgumentException naming the path and what to do
   */
  public static Path directory(Path dir, String what) {
    Path path = dir.toAbsolutePath().normalize();
    checkAncestors(path, what);
    List<Path> missing = new ArrayList<>();
    for (Path p = path; p != null && !Files.exists(p, LinkOption.NOFOLLOW_LINKS); p = p.getParent()) {
      missing.add(p);
    }
    Collections.reverse(missing);
    for (Path p : missing) {
      try {
        Files.createDirectory(p, DIRECTORY);
      } catch (FileAlreadyExistsException e) {
        // made meanwhile, by this process or by someone else: the checks below tell which
      } catch (IOException | UnsupportedOperationException e) {
        throw new InvalidArgumentException("cannot create " + what + " " + p + ": " + e.getMessage());
      }
    }
    for (Path p : missing) {
      if (!p.equals(path)) {
        checkDirectory(p, what + "'s parent");
      }
    }
    checkDirectory(path, what);
    return dir;
  }

  /**
   * Refuses {@code dir} unless it is a directory of this user's that group and others cannot reach
   * (a symbolic link to one is followed only when this user or root owns the link).
   *
   * @throws InvalidArgumentException naming the path, its owner or mode, and what to do
   */
  public static void checkDirectory(Path dir, String what) {
    Map<String, Object> a = attributes(dir, what, false);
    if (type(a) == IS_LINK) {
      refuseForeignLink(dir, a, what);
      a = attributes(dir, what, true);
    }
    if (type(a) != IS_DIRECTORY) {
      throw new InvalidArgumentException(what + " " + dir + " exists and is not a directory; remove it or choose"
          + " another path");
    }
    if (uid(a) != UID) {
      throw new InvalidArgumentException(what + " " + dir + " is owned by " + user(dir, a) + ", not by you (uid "
          + UID + "): another user made it and may have read or changed what is in it; remove it (as its owner or"
          + " root) or choose another path");
    }
    if ((mode(a) & OTHERS) != 0) {
      throw new InvalidArgumentException(what + " " + dir + " has mode " + octal(a) + ": group or others may reach"
          + " it; run `chmod 700 " + dir + "` (and `chmod -R go= " + dir + "` for what is in it), then start again");
    }
  }

  /**
   * Refuses {@code path} when a directory above it could be replaced by another user: a symbolic
   * link on the way that another user owns, or a directory that another user (root aside) owns or
   * that others may write without the sticky bit.
   *
   * @throws InvalidArgumentException naming the directory and why
   */
  public static void checkAncestors(Path path, String what) {
    Path absolute = path.toAbsolutePath().normalize();
    List<Path> above = new ArrayList<>();
    for (Path p = absolute.getParent(); p != null; p = p.getParent()) {
      above.add(0, p);
    }
    for (Path p : above) {
      if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
        break;
      }
      Map<String, Object> a = attributes(p, what, false);
      if (type(a) == IS_LINK) {
        refuseForeignLink(p, a, what + " " + absolute + ": the path");
      }
    }
    // where the path really leads (a link of this user's at its end included): that is what must hold
    for (Path p : realAncestors(absolute)) {
      Map<String, Object> a = attributes(p, what, true);
      if (uid(a) != 0 && uid(a) != UID) {
        throw new InvalidArgumentException(what + " " + absolute + " is inside " + p + ", which " + user(p, a)
            + " owns and could replace it; choose a path under directories only you or root own");
      }
      if ((mode(a) & OTHERS_WRITE) != 0 && (mode(a) & STICKY) == 0) {
        throw new InvalidArgumentException(what + " " + absolute + " is inside " + p + " (mode " + octal(a)
            + "), which others may write without the sticky bit, so they could replace it; choose a path under"
            + " directories only you can write (or sticky ones such as /tmp and /dev/shm)");
      }
    }
  }

  /**
   * Refuses when anything below {@code dir} is owned by another user, or is a file or directory
   * group or others may reach, or is a symbolic link another user owns. Links are never followed.
   * The message lists what was found and the commands that fix it.
   *
   * @throws InvalidArgumentException listing the paths
   */
  public static void checkTree(Path dir, String what) {
    List<String> problems = new ArrayList<>();
    boolean[] found = new boolean[2]; // [0]: another user's, [1]: reachable by others
    try {
      Files.walkFileTree(dir, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) {
          if (!d.equals(dir)) {
            inspect(d);
          }
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) {
          inspect(f);
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFileFailed(Path f, IOException e) {
          if (!(e instanceof NoSuchFileException)) { // one removed meanwhile is no concern
            problems.add(f + " (cannot be read: " + e.getMessage() + ")");
          }
          return FileVisitResult.CONTINUE;
        }

        private void inspect(Path p) {
          Map<String, Object> a;
          try {
            a = Files.readAttributes(p, "unix:mode,uid", LinkOption.NOFOLLOW_LINKS);
          } catch (IOException e) {
            return; // removed meanwhile
          }
          boolean link = type(a) == IS_LINK;
          if (uid(a) != UID && !(link && uid(a) == 0)) {
            problems.add(p + " (owned by " + user(p, a) + ")");
            found[0] = true;
          } else if (!link && (mode(a) & OTHERS) != 0) {
            problems.add(p + " (mode " + octal(a) + ")");
            found[1] = true;
          }
        }
      });
    } catch (IOException e) {
      throw new InvalidArgumentException("cannot check " + what + " " + dir + ": " + e.getMessage());
    }
    if (problems.isEmpty()) {
      return;
    }
    Collections.sort(problems);
    List<String> fixes = new ArrayList<>();
    if (found[1]) {
      fixes.add("run `chmod -R go= " + dir + "` (no group or other access under it)");
    }
    if (found[0]) {
      fixes.add("remove what another user owns (after checking where it came from: only you should be able to"
          + " write here)");
    }
    String more = problems.size() > SHOWN ? "\n  ... and " + (problems.size() - SHOWN) + " more" : "";
    throw new InvalidArgumentException(what + " " + dir + " holds files other users may reach or may have placed:\n  "
        + String.join("\n  ", problems.subList(0, Math.min(SHOWN, problems.size()))) + more + "\n"
        + String.join("; ", fixes) + "; then start again");
  }

  /**
   * Refuses {@code file}, when it exists, unless it is a regular file of this user's that group
   * and others cannot reach. Returns whether it exists.
   *
   * @throws InvalidArgumentException naming the file, its owner or mode, and what to do
   */
  public static boolean checkFile(Path file, String what) {
    if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      return false;
    }
    Map<String, Object> a = attributes(file, what, false);
    if (type(a) != IS_FILE) {
      throw new InvalidArgumentException(what + " " + file + " is not a regular file (a symbolic link is refused"
          + " there); remove it");
    }
    if (uid(a) != UID) {
      throw new InvalidArgumentException(what + " " + file + " is owned by " + user(file, a) + ", not by you (uid "
          + UID + "); remove it (as its owner or root)");
    }
    if ((mode(a) & OTHERS) != 0) {
      throw new InvalidArgumentException(what + " " + file + " has mode " + octal(a) + ": group or others may"
          + " reach it; run `chmod 600 " + file + "`, then start again");
    }
    return true;
  }

  /**
   * Gives {@code file}, which a library just created, mode 0600 (never following a link). Safe only
   * inside a directory no one else may enter, where nobody could open the file meanwhile.
   *
   * @throws InvalidArgumentException when the mode cannot be set
   */
  public static void restrict(Path file) {
    try {
      Files.getFileAttributeView(file, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
          .setPermissions(PosixFilePermissions.fromString("rw-------"));
    } catch (IOException e) {
      throw new InvalidArgumentException("cannot make " + file + " private (mode 0600): " + e.getMessage());
    }
  }

  /** The user this process runs as (its effective uid). */
  public static int uid() {
    return UID;
  }

  private static List<Path> realAncestors(Path absolute) {
    Path existing = absolute;
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    List<Path> out = new ArrayList<>();
    if (existing == null) {
      return out;
    }
    Path real;
    try {
      real = existing.toRealPath();
    } catch (IOException e) {
      return out;
    }
    for (Path p = existing.equals(absolute) ? real.getParent() : real; p != null; p = p.getParent()) {
      out.add(0, p);
    }
    return out;
  }

  private static void refuseForeignLink(Path link, Map<String, Object> a, String what) {
    if (uid(a) != 0 && uid(a) != UID) {
      throw new InvalidArgumentException(what + " " + link + " is a symbolic link owned by " + user(link, a)
          + ", who could point it anywhere; remove it (a directory is expected there) or choose another path");
    }
  }

  private static Map<String, Object> attributes(Path p, String what, boolean follow) {
    try {
      return follow ? Files.readAttributes(p, "unix:mode,uid")
          : Files.readAttributes(p, "unix:mode,uid", LinkOption.NOFOLLOW_LINKS);
    } catch (NoSuchFileException e) {
      throw new InvalidArgumentException(what + " " + p + (follow ? " leads nowhere (a symbolic link to nothing)"
          : " does not exist"));
    } catch (IOException | UnsupportedOperationException e) {
      throw new InvalidArgumentException("cannot check " + what + " " + p + ": " + e.getMessage());
    }
  }

  private static int mode(Map<String, Object> a) {
    return (Integer) a.get("mode");
  }

  private static int type(Map<String, Object> a) {
    return mode(a) & TYPE;
  }

  private static int uid(Map<String, Object> a) {
    return (Integer) a.get("uid");
  }

  private static String octal(Map<String, Object> a) {
    return String.format("%04o", mode(a) & 07777);
  }

  private static String user(Path p, Map<String, Object> a) {
    try {
      String name = Files.getOwner(p, LinkOption.NOFOLLOW_LINKS).getName();
      return name.equals(Integer.toString(uid(a))) ? "uid " + uid(a) : "uid " + uid(a) + " (" + name + ")";
    } catch (IOException e) {
      return "uid " + uid(a);
    }
  }

  // The effective uid, from the kernel's own account of this process (Java has no call for it).
  private static int processUid() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.US_ASCII)) {
        if (line.startsWith("Uid:")) {
          return Integer.parseInt(line.substring(4).trim().split("\\s+")[1]);
        }
      }
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("cannot tell which user this process runs as (/proc/self/status)", e);
    }
    throw new IllegalStateException("/proc/self/status names no Uid");
  }
}
