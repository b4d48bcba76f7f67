package io.dataclay.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dataclay.exceptions.InvalidArgumentException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The servers' own path checks; another user is simulated by giving a path to an unused uid (as root). */
class PrivatePathsTest {
  private static final int STRANGER = 54321;

  @TempDir
  Path tmp;

  @Test
  void a_missing_directory_and_its_missing_parents_are_made_0700() throws IOException {
    Path dir = PrivatePaths.directory(tmp.resolve("a/b/pool"), "pool directory");
    for (Path p : List.of(tmp.resolve("a"), tmp.resolve("a/b"), dir)) {
      assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(p)), p.toString());
    }
  }

  @Test
  void a_directory_others_may_read_is_refused_with_the_chmod_to_run_and_left_as_it_was() throws IOException {
    Path dir = Files.createDirectory(tmp.resolve("home"));
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> PrivatePaths.directory(dir, "DATACLAY_HOME"));
    assertTrue(e.getMessage().contains("DATACLAY_HOME " + dir + " has mode 0755"), e.getMessage());
    assertTrue(e.getMessage().contains("run `chmod 700 " + dir + "`"), e.getMessage());
    assertEquals("rwxr-xr-x", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
  }

  @Test
  void a_directory_another_user_owns_or_a_path_inside_one_is_refused() throws IOException {
    assumeTrue(PrivatePaths.uid() == 0, "simulating another user needs root");
    Path theirs = Files.createDirectory(tmp.resolve("theirs"), PrivatePaths.DIRECTORY);
    Files.setAttribute(theirs, "unix:uid", STRANGER);
    InvalidArgumentException owned = assertThrows(InvalidArgumentException.class,
        () -> PrivatePaths.directory(theirs, "pool directory"));
    InvalidArgumentException inside = assertThrows(InvalidArgumentException.class,
        () -> PrivatePaths.directory(theirs.resolve("backend-1"), "pool directory"));
    assertTrue(owned.getMessage().contains("pool directory " + theirs + " is owned by uid " + STRANGER),
        owned.getMessage());
    assertTrue(inside.getMessage().contains("is inside " + theirs + ", which uid " + STRANGER + " owns"),
        inside.getMessage());
    try (Stream<Path> entries = Files.list(theirs)) {
      assertEquals(0, entries.count());
    }
  }

  @Test
  void a_path_inside_a_directory_others_may_write_is_refused_unless_it_is_sticky() throws IOException {
    Path open = Files.createDirectory(tmp.resolve("open"));
    Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
    Path sticky = Files.createDirectory(tmp.resolve("sticky"));
    Files.setAttribute(sticky, "unix:mode", 01777);
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> PrivatePaths.directory(open.resolve("pool"), "pool directory"));
    assertTrue(e.getMessage().contains("(mode 0777), which others may write without the sticky bit"), e.getMessage());
    PrivatePaths.directory(sticky.resolve("pool"), "pool directory");
    assertTrue(Files.isDirectory(sticky.resolve("pool")));
  }

  @Test
  void a_link_another_user_owns_is_refused_and_one_of_yours_is_followed() throws IOException {
    assumeTrue(PrivatePaths.uid() == 0, "simulating another user needs root");
    Path target = Files.createDirectory(tmp.resolve("real"), PrivatePaths.DIRECTORY);
    Path mine = Files.createSymbolicLink(tmp.resolve("mine"), target);
    Path theirs = Files.createSymbolicLink(tmp.resolve("theirs"), target);
    Files.getFileAttributeView(theirs, java.nio.file.attribute.PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
        .setOwner(tmp.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(
            Integer.toString(STRANGER)));
    PrivatePaths.checkDirectory(mine, "DATACLAY_HOME");
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> PrivatePaths.checkDirectory(theirs, "DATACLAY_HOME"));
    assertTrue(e.getMessage().contains(theirs + " is a symbolic link owned by uid " + STRANGER), e.getMessage());
  }

  @Test
  void the_tree_check_lists_what_others_may_reach_and_the_command_that_fixes_it() throws IOException {
    Path dir = Files.createDirectory(tmp.resolve("backend"), PrivatePaths.DIRECTORY);
    Path models = Files.createDirectory(dir.resolve("models"));
    Files.setPosixFilePermissions(models, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path id = Files.writeString(dir.resolve("backend.id"), "x");
    Files.setPosixFilePermissions(id, PosixFilePermissions.fromString("rw-r--r--"));
    Files.createFile(dir.resolve("fine"), PrivatePaths.FILE);
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> PrivatePaths.checkTree(dir, "the backend directory"));
    assertTrue(e.getMessage().contains(models + " (mode 0755)"), e.getMessage());
    assertTrue(e.getMessage().contains(id + " (mode 0644)"), e.getMessage());
    assertTrue(e.getMessage().contains("run `chmod -R go= " + dir + "`"), e.getMessage());
    assertFalse(e.getMessage().contains("fine"), e.getMessage());
  }

  @Test
  void a_file_others_may_read_or_a_link_is_refused_and_a_missing_one_is_reported_missing() throws IOException {
    Path loose = Files.writeString(tmp.resolve("metadata.db"), "");
    Files.setPosixFilePermissions(loose, PosixFilePermissions.fromString("rw-r--r--"));
    Path link = Files.createSymbolicLink(tmp.resolve("metadata.db-wal"), loose);
    InvalidArgumentException readable = assertThrows(InvalidArgumentException.class,
        () -> PrivatePaths.checkFile(loose, "the metadata database"));
    InvalidArgumentException linked = assertThrows(InvalidArgumentException.class,
        () -> PrivatePaths.checkFile(link, "the metadata database file"));
    assertTrue(readable.getMessage().contains("has mode 0644") && readable.getMessage().contains("chmod 600 " + loose),
        readable.getMessage());
    assertTrue(linked.getMessage().contains("is not a regular file"), linked.getMessage());
    assertFalse(PrivatePaths.checkFile(tmp.resolve("nothing"), "the metadata database"));
  }
}
