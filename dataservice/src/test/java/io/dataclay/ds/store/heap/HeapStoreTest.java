package io.dataclay.ds.store.heap;

import static io.dataclay.ds.store.TestObjects.object;
import static io.dataclay.ds.store.TestObjects.text;
import static io.dataclay.ds.store.TestObjects.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.ds.store.EncryptedStoreContract;
import io.dataclay.ds.store.EngineUnderTest;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.ds.store.TestPools;
import io.dataclay.ds.store.crypt.FieldCipher;
import io.dataclay.ds.store.kv.KvStore;
import io.dataclay.ds.store.pmem.PoolStore;
import io.dataclay.ds.store.pmem.PoolStoreContract;
import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The heap engine passes the whole store contract without a store key and with one (then also the
 * encryption promises), plus its own: an update writes only the changed field, in place, also
 * when values are sealed one by one.
 */
class HeapStoreTest {
  private static final EngineUnderTest ENGINE = EngineUnderTest.of(HeapStore.ENGINE);
  private static final int MIB = 1 << 20;

  @Nested
  class Plain extends PoolStoreContract {
    Plain() {
      super(ENGINE, HeapStore.POOL_FILE);
    }

    @Test
    void updatingOneSmallFieldOfALargeObjectWritesOnlyThatFieldInPlace() {
      // the new value and its entry's lengths, nothing of the megabyte
      assertASmallFieldUpdateOfALargeObjectWritesAtMost(32, store, heap());
    }

    @Test
    void resizingOneFieldOfALargeObjectRewritesThatFieldAndNotTheOthers() {
      // setup
      UUID id = UUID.randomUUID();
      byte[] blob = randomBytes(MIB);
      store.put(largeObject(id, blob, "00000001"));
      // run + verify: a small field outgrowing its inline area moves, with a new field table
      long grownSmall = bytesWrittenBy(heap(),
          () -> store.applyDelta(new ObjectDelta(id, Map.of("counter", value("c".repeat(500))), Set.of())));
      assertTrue(grownSmall < 2048, "growing the 8-byte field to 500 bytes wrote " + grownSmall + " bytes");
      // run + verify: adding and removing a field rewrites the table, not the megabyte
      long reshaped = bytesWrittenBy(heap(),
          () -> store.applyDelta(new ObjectDelta(id, Map.of("extra", value("e")), Set.of("counter"))));
      assertTrue(reshaped < 1024, "adding and removing a small field wrote " + reshaped + " bytes");
      // run + verify: the large field growing by one byte is written once, in a block of its own
      byte[] bigger = randomBytes(MIB + 1);
      long grownLarge = bytesWrittenBy(heap(),
          () -> store.applyDelta(new ObjectDelta(id, Map.of("blob", FieldValue.of(bigger.clone())), Set.of())));
      assertTrue(grownLarge >= MIB + 1 && grownLarge < MIB + 1024, "growing the 1 MiB field wrote " + grownLarge + " bytes");
      StoredObject got = store.get(id).orElseThrow();
      assertEquals(List.of("blob", "extra"), List.copyOf(got.fields().keySet()));
      assertArrayEquals(bigger, got.fields().get("blob").value());
    }

    @Test
    void fieldUpdatesInPlaceSurviveAReopen() {
      UUID id = UUID.randomUUID();
      byte[] blob = randomBytes(200_000);
      UUID ref = UUID.randomUUID();
      store.put(largeObject(id, blob, "00000001"));
      byte[] sameSize = randomBytes(200_000);

      store.applyDelta(new ObjectDelta(id, Map.of("counter", new FieldValue(bytes("00000009"), List.of(ref)),
          "blob", FieldValue.of(sameSize.clone())), Set.of()));
      store.close();
      store = open(poolSize());

      StoredObject got = store.get(id).orElseThrow();
      assertEquals("00000009", text(got.fields().get("counter")));
      assertEquals(List.of(ref), got.fields().get("counter").references());
      assertArrayEquals(sameSize, got.fields().get("blob").value());
    }

    @Test
    void aPoolMadeByTheKvEngineIsRefusedWithItsContentUnchanged() throws Exception {
      // setup: a kv pool file under the heap pool's name
      store.close();
      Path kvDir = TestPools.newPath();
      try {
        try (ObjectStore kv = ObjectStores.open(new StoreConfig(KvStore.ENGINE, kvDir, poolSize()))) {
          kv.put(object(UUID.randomUUID(), "a", "1"));
        }
        Path pool = poolDir.resolve(HeapStore.POOL_FILE);
        Files.delete(pool);
        Files.copy(kvDir.resolve(KvStore.POOL_FILE), pool);
        byte[] before = Files.readAllBytes(pool);
        // run
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> open(poolSize()));
        // verify
        assertTrue(e.getMessage().contains("no heap object directory"), e.getMessage());
        assertEquals(before.length, Files.size(pool));
        Files.delete(pool);
      } finally {
        TestPools.delete(kvDir);
        store = open(poolSize());
      }
    }

    private HeapStore heap() {
      return heapUnder(engineUnder(store));
    }

    private static byte[] bytes(String s) {
      return s.getBytes(StandardCharsets.UTF_8);
    }
  }

  @Nested
  class Encrypted extends EncryptedStoreContract {
    Encrypted() {
      super(ENGINE);
    }

    @Test
    void updatingOneSmallFieldOfALargeEncryptedObjectWritesOnlyThatFieldInPlace() {
      // the sealed 8-byte value and its entry's lengths, nothing of the megabyte
      long limit = 32 + FieldCipher.OVERHEAD;
      assertASmallFieldUpdateOfALargeObjectWritesAtMost(limit, store, heapUnder(engineUnder(store)));
    }
  }

  /**
   * Stores an object of a 1 MiB field and an 8-byte one, changes the 8-byte field, and checks that
   * the change wrote at most {@code limit} bytes to the pool under {@code store} and reads back whole.
   */
  private static void assertASmallFieldUpdateOfALargeObjectWritesAtMost(long limit, ObjectStore store, HeapStore heap) {
    // setup
    UUID id = UUID.randomUUID();
    byte[] blob = randomBytes(MIB);
    store.put(largeObject(id, blob, "00000001"));
    // run
    long written = bytesWrittenBy(heap,
        () -> store.applyDelta(new ObjectDelta(id, Map.of("counter", value("00000002")), Set.of())));
    // verify
    assertTrue(written <= limit, "one 8-byte field update wrote " + written + " bytes");
    StoredObject got = store.get(id).orElseThrow();
    assertEquals("00000002", text(got.fields().get("counter")));
    assertArrayEquals(blob, got.fields().get("blob").value());
  }

  /** The heap engine's own store under the layers over it ({@code engine}: the contract's {@code engineUnder}). */
  private static HeapStore heapUnder(ObjectStore engine) {
    return (HeapStore) ((PoolStore<?>) engine).layout();
  }

  /** Bytes {@code change} made {@code heap} write to its pool. */
  private static long bytesWrittenBy(HeapStore heap, Runnable change) {
    long before = heap.bytesWritten();
    change.run();
    return heap.bytesWritten() - before;
  }

  private static StoredObject largeObject(UUID id, byte[] blob, String counter) {
    Map<String, FieldValue> fields = new LinkedHashMap<>();
    fields.put("blob", FieldValue.of(blob.clone()));
    fields.put("counter", value(counter));
    return object(id, fields);
  }

  private static byte[] randomBytes(int n) {
    byte[] b = new byte[n];
    new Random(n).nextBytes(b);
    return b;
  }
}
