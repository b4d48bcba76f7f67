package io.dataclay.ds.store;

import static io.dataclay.ds.store.TestObjects.object;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.InvalidArgumentException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The store contract on an engine's encrypted variant (every test of {@link ObjectStoreContract}
 * runs with a store key), plus what encryption promises: values never reach the pool in clear, and
 * a pool opens only with the key it was made with (no key, another key, or a key on a pool made
 * without one is refused, and nothing in the pool changes).
 */
public abstract class EncryptedStoreContract extends ObjectStoreContract {
  private Path keyFile;

  /** The encryption contract for {@code engine}. */
  protected EncryptedStoreContract(EngineUnderTest engine) {
    super(engine);
  }

  // Made when the first store of a test opens (before any @BeforeEach of a subclass runs).
  private Path keyFile() {
    if (keyFile == null) {
      keyFile = TestKeys.newKeyFile();
    }
    return keyFile;
  }

  @AfterEach
  void deleteKeyFile() {
    TestKeys.delete(keyFile);
  }

  /** The engine's configuration without a key. */
  protected final StoreConfig plainConfig(Path path, long size) {
    return super.config(path, size);
  }

  @Override
  protected final StoreConfig config(Path path, long size) {
    return plainConfig(path, size).withKeyFile(keyFile());
  }

  /** Whether the store at {@code path} keeps {@code bytes} anywhere in clear (pmem: its pool files). */
  protected boolean storeContains(Path path, byte[] bytes) {
    return TestPools.filesContain(path, bytes);
  }

  /** A digest of everything the store at {@code path} keeps (pmem: every file of its pool directory). */
  protected String snapshot(Path path) {
    Map<String, String> digests = new TreeMap<>();
    try (Stream<Path> walk = Files.walk(path)) {
      for (Path file : walk.filter(Files::isRegularFile).toList()) {
        digests.put(path.relativize(file).toString(), sha256(Files.readAllBytes(file)));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return digests.toString();
  }

  @Test
  void statsSayTheStoreIsEncrypted() {
    assertTrue(store.stats().encrypted());
  }

  @Test
  void valuesNeverReachThePoolInClearWhereAPlainStoreKeepsThem() {
    // setup: the same object in this store and in a plain one
    byte[] marker = ("secret-" + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8);
    UUID id = UUID.randomUUID();
    StoredObject secret = object(id, Map.of("small", FieldValue.of(marker.clone()), "large",
        FieldValue.of(TestPools.repeated(marker, 500))));
    Path plainDir = TestPools.newPath();
    try {
      try (ObjectStore plain = ObjectStores.open(plainConfig(plainDir, poolSize()))) {
        plain.put(secret);
        assertFalse(plain.stats().encrypted());
      }
      // run
      store.put(secret);
      store.close();
      // verify
      assertTrue(storeContains(plainDir, marker), "the plain store does not keep the value in clear: the check is void");
      assertFalse(storeContains(poolDir, marker), "the encrypted store keeps the value in clear");
      store = open(poolSize());
      assertSameObject(secret, store.get(id).orElseThrow());
    } finally {
      TestPools.delete(plainDir);
    }
  }

  @Test
  void anotherKeyIsRefusedNamingItsFileAndNothingInThePoolChanges() {
    // setup
    UUID id = UUID.randomUUID();
    store.put(object(id, "a", "1"));
    store.close();
    String before = snapshot(poolDir);
    Path otherKey = TestKeys.newKeyFile();
    try {
      // run
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
          () -> ObjectStores.open(plainConfig(poolDir, poolSize()).withKeyFile(otherKey)));
      // verify
      assertTrue(e.getMessage().contains(otherKey.toString()) && e.getMessage().contains("not the key"), e.getMessage());
      assertEquals(before, snapshot(poolDir));
    } finally {
      TestKeys.delete(otherKey);
      store = open(poolSize());
    }
    assertEquals("1", TestObjects.text(store.get(id).orElseThrow().fields().get("a")));
  }

  @Test
  void noKeyOnAnEncryptedPoolIsRefusedAndNothingInThePoolChanges() {
    store.put(object(UUID.randomUUID(), "a", "1"));
    store.close();
    String before = snapshot(poolDir);

    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> ObjectStores.open(plainConfig(poolDir, poolSize())));

    assertTrue(e.getMessage().contains("is encrypted and no key was given"), e.getMessage());
    assertEquals(before, snapshot(poolDir));
    store = open(poolSize());
    assertEquals(1, store.count());
  }

  @Test
  void aKeyOnAPoolMadeWithoutOneIsRefusedAndNothingInThePoolChanges() {
    Path plainDir = TestPools.newPath();
    try {
      try (ObjectStore plain = ObjectStores.open(plainConfig(plainDir, poolSize()))) {
        plain.put(object(UUID.randomUUID(), "a", "1"));
      }
      String before = snapshot(plainDir);

      InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
          () -> ObjectStores.open(config(plainDir, poolSize())));

      assertTrue(e.getMessage().contains("made without encryption"), e.getMessage());
      assertEquals(before, snapshot(plainDir));
    } finally {
      TestPools.delete(plainDir);
    }
  }

  @Test
  void aKeyFileOthersCanReadIsRefusedBeforeAnythingIsCreated() {
    Path exposed = TestKeys.keyFile(new byte[32], "rw-r--r--");
    Path newDir = TestPools.newPath();
    try {
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
          () -> ObjectStores.open(plainConfig(newDir, poolSize()).withKeyFile(exposed)));

      assertTrue(e.getMessage().contains("chmod 600 " + exposed), e.getMessage());
      assertFalse(Files.exists(newDir));
    } finally {
      TestKeys.delete(exposed);
      TestPools.delete(newDir);
    }
  }

  private static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
