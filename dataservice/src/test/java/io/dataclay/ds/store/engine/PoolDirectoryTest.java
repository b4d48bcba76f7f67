package io.dataclay.ds.store.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dataclay.common.PrivatePaths;
import io.dataclay.ds.store.TestPools;
import io.dataclay.ds.store.crypt.StoreKey;
import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Claiming a pool directory (engine marker, key check, lock) and erasing one. */
class PoolDirectoryTest {
  private final Path dir = TestPools.newPath();

  @AfterEach
  void removeDirectory() {
    TestPools.delete(dir);
  }

  @Test
  void claimingANewDirectoryRecordsTheEngine() throws Exception {
    try (PoolDirectory claimed = PoolDirectory.claim(dir, "kv")) {
      assertEquals(dir.toAbsolutePath(), claimed.path());
    }

    assertEquals("kv\n", Files.readString(dir.resolve(PoolDirectory.MARKER)));
  }

  @Test
  void aNonEmptyDirectoryThatIsNotAPoolIsRefusedAndLeftAlone() throws Exception {
    TestPools.directory(dir);
    TestPools.writePrivate(dir.resolve("notes.txt"), "mine");

    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> PoolDirectory.claim(dir, "kv"));

    assertTrue(e.getMessage().contains("not empty"), e.getMessage());
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(List.of("notes.txt"), files.map(p -> p.getFileName().toString()).toList());
    }
  }

  @Test
  void aClaimedDirectoryIsRefusedUntilReleased() {
    try (PoolDirectory first = PoolDirectory.claim(dir, "kv")) {
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> PoolDirectory.claim(dir, "kv"));
      assertTrue(e.getMessage().contains("already open"), e.getMessage());
    }

    try (PoolDirectory again = PoolDirectory.claim(dir, "kv")) {
      assertEquals(dir.toAbsolutePath(), again.path());
    }
  }

  @Test
  void aMissingDirectoryArgumentIsRefusedNamingTheEngine() {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> PoolDirectory.claim(null, "kv"));

    assertTrue(e.getMessage().contains("kv"), e.getMessage());
  }

  @Test
  void aDirectoryMadeWithAKeyRecordsItsCheckAndSealsWithIt() throws Exception {
    StoreKey key = StoreKey.of(new byte[32], "test key");

    try (PoolDirectory claimed = PoolDirectory.claim(dir, "kv", key)) {
      assertTrue(claimed.encrypted());
    }

    List<String> lines = Files.readAllLines(dir.resolve(PoolDirectory.MARKER));
    assertEquals("kv", lines.get(0));
    assertTrue(lines.get(1).startsWith("key-check v1 ") && key.matches(lines.get(1).substring(10)), lines.get(1));
    try (PoolDirectory again = PoolDirectory.claim(dir, "kv", key)) {
      assertTrue(again.encrypted());
    }
  }

  @Test
  void aDirectoryOthersMayReadOrAPoolFileTheyMayReadIsRefusedAndLeftAlone() throws Exception {
    TestPools.directory(dir);
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    String open = assertThrows(InvalidArgumentException.class, () -> PoolDirectory.claim(dir, "kv")).getMessage();
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    Path pool = Files.writeString(dir.resolve("kv.pool"), "made by an earlier release");
    Files.setPosixFilePermissions(pool, PosixFilePermissions.fromString("rw-r--r--"));
    String readable = assertThrows(InvalidArgumentException.class, () -> PoolDirectory.claim(dir, "kv")).getMessage();

    assertTrue(open.contains("pool directory " + dir + " has mode 0755") && open.contains("chmod 700 " + dir), open);
    assertTrue(readable.contains(pool + " (mode 0644)") && readable.contains("chmod -R go= " + dir), readable);
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(List.of("kv.pool"), files.map(p -> p.getFileName().toString()).toList());
    }
  }

  @Test
  void aDirectoryAnotherUserMadeIsRefusedAndNothingIsWrittenToIt() throws Exception {
    assumeTrue(PrivatePaths.uid() == 0, "simulating another user needs root");
    TestPools.directory(dir);
    Files.setAttribute(dir, "unix:uid", 54321);
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));

    String e = assertThrows(InvalidArgumentException.class, () -> PoolDirectory.claim(dir, "kv")).getMessage();

    assertTrue(e.contains("pool directory " + dir + " is owned by uid 54321"), e);
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(0, files.count());
    }
  }

  @Test
  void aNewPoolIsItsUsersAlone() throws Exception {
    try (PoolDirectory claimed = PoolDirectory.claim(dir, "kv")) {
      assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
      for (String name : List.of(PoolDirectory.MARKER, PoolDirectory.LOCK)) {
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(claimed.resolve(name))));
      }
    }
  }

  @Test
  void aMarkerLineThisBuildDoesNotKnowIsRefusedAndLeftAlone() throws Exception {
    TestPools.directory(dir);
    TestPools.writePrivate(dir.resolve(PoolDirectory.MARKER), "kv\ncompression zstd\n");

    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> PoolDirectory.claim(dir, "kv"));

    assertTrue(e.getMessage().contains("compression zstd"), e.getMessage());
    assertEquals("kv\ncompression zstd\n", Files.readString(dir.resolve(PoolDirectory.MARKER)));
  }

  @Test
  void erasingOverwritesEveryFileWithZerosBeforeRemovingThem() throws Exception {
    // setup: a pool with a file whose bytes stay reachable through a hard link after the unlink
    byte[] secret = "secret bytes ".repeat(100_000).getBytes();
    try (PoolDirectory claimed = PoolDirectory.claim(dir, "kv")) {
      Files.write(claimed.resolve("kv.pool"), secret);
    }
    Path outside = TestPools.newPath();
    Files.createDirectories(outside);
    try {
      Path link = Files.createLink(outside.resolve("link"), dir.resolve("kv.pool"));
      // run
      String erased = PoolDirectory.erase(dir, "kv");
      // verify
      assertFalse(Files.exists(dir));
      assertTrue(erased.contains("3 file(s), " + (secret.length + "kv\n".length()) + " bytes overwritten"), erased); // pool, marker, lock
      byte[] left = Files.readAllBytes(link);
      assertEquals(secret.length, left.length);
      assertArrayEquals(new byte[secret.length], left, "the unlinked pool file still holds its bytes");
    } finally {
      TestPools.delete(outside);
    }
  }

  @Test
  void erasingIsRefusedForAPoolInUseAnotherEnginesPoolAndADirectoryThatIsNoPool() throws Exception {
    byte[] content = new byte[4096];
    Arrays.fill(content, (byte) 7);
    try (PoolDirectory claimed = PoolDirectory.claim(dir, "kv")) {
      Files.write(claimed.resolve("kv.pool"), content);
      String inUse = assertThrows(InvalidArgumentException.class, () -> PoolDirectory.erase(dir, "kv")).getMessage();
      assertTrue(inUse.contains("already open"), inUse);
    }
    String other = assertThrows(InvalidArgumentException.class, () -> PoolDirectory.erase(dir, "heap")).getMessage();
    assertTrue(other.contains("'kv' engine"), other);
    assertArrayEquals(content, Files.readAllBytes(dir.resolve("kv.pool")));
    Path notAPool = TestPools.newPath();
    try {
      Files.createDirectories(notAPool);
      Files.write(notAPool.resolve("thesis.tex"), content);
      String foreign = assertThrows(InvalidArgumentException.class, () -> PoolDirectory.erase(notAPool, "kv")).getMessage();
      assertTrue(foreign.contains("not a dataClay pool"), foreign);
      assertArrayEquals(content, Files.readAllBytes(notAPool.resolve("thesis.tex")));
      assertNull(PoolDirectory.erase(notAPool.resolve("missing"), "kv"));
    } finally {
      TestPools.delete(notAPool);
    }
  }
}
