package io.dataclay.ds.store.crypt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.ds.store.TestKeys;
import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Reading key files: the three forms of one key, and every refusal naming the file and the reason. */
class StoreKeyTest {
  private static final byte[] KEY = HexFormat.of().parseHex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");

  private final List<Path> files = new ArrayList<>();

  @AfterEach
  void deleteFiles() {
    files.forEach(TestKeys::delete);
  }

  @Test
  void rawHexAndBase64FilesOfOneKeyAreTheSameKey() {
    // setup
    String check = StoreKey.of(KEY, "bytes").newCheck();
    // run + verify: each form matches the key check of the bytes
    assertTrue(StoreKey.read(file(KEY, "rw-------")).matches(check));
    assertTrue(StoreKey.read(file(text(HexFormat.of().formatHex(KEY) + "\n"), "r--------")).matches(check));
    assertTrue(StoreKey.read(file(text(Base64.getEncoder().encodeToString(KEY) + "\n"), "rw-------")).matches(check));
  }

  @Test
  void aKeyCheckMatchesItsKeyOnlyAndShowsNothingOfIt() {
    StoreKey key = StoreKey.of(KEY, "one");
    StoreKey other = StoreKey.of(new byte[32], "other");

    String check = key.newCheck();

    assertTrue(key.matches(check));
    assertFalse(other.matches(check));
    assertFalse(check.contains(HexFormat.of().formatHex(KEY)) || check.contains(Base64.getEncoder().encodeToString(KEY)));
    assertFalse(check.equals(key.newCheck()), "two checks of one key are salted apart");
  }

  @Test
  void aKeyFileGroupOrOthersCanReadOrWriteIsRefusedNamingTheFix() {
    for (String mode : new String[] {"rw-r-----", "rw----r--", "rw--w----", "rw-------"}) {
      Path file = file(KEY, mode);
      if (mode.equals("rw-------")) {
        StoreKey.read(file);
        continue;
      }
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> StoreKey.read(file), mode);
      assertTrue(e.getMessage().contains(file.toString()) && e.getMessage().contains("chmod 600"), e.getMessage());
    }
  }

  @Test
  void aFileThatHoldsNo256BitKeyIsRefusedNamingTheFormsExpected() {
    for (byte[] content : new byte[][] {new byte[31], new byte[33], text("00".repeat(31)), text("not a key at all"),
        text(Base64.getEncoder().encodeToString(new byte[16])), new byte[0]}) {
      Path file = file(content, "rw-------");
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> StoreKey.read(file));
      assertTrue(e.getMessage().contains(file.toString()) && e.getMessage().contains("32 raw bytes"), e.getMessage());
    }
  }

  @Test
  void aMissingKeyFileIsRefusedNamingIt() {
    Path missing = Path.of("/tmp", "no-such-key-" + UUID.randomUUID());

    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> StoreKey.read(missing));

    assertEquals("store key file " + missing + " does not exist", e.getMessage());
  }

  private Path file(byte[] content, String mode) {
    Path file = TestKeys.keyFile(content, mode);
    files.add(file);
    return file;
  }

  private static byte[] text(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
