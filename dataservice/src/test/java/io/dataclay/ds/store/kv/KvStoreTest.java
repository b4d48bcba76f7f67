package io.dataclay.ds.store.kv;

import static io.dataclay.ds.store.TestObjects.object;
import static io.dataclay.ds.store.TestObjects.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.intel.pmem.llpl.Heap;
import com.intel.pmem.llpl.MemoryBlock;
import io.dataclay.ds.store.EncryptedStoreContract;
import io.dataclay.ds.store.EngineUnderTest;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.ObjectStoreContract;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.TestPools;
import io.dataclay.ds.store.pmem.PmemHeap;
import io.dataclay.ds.store.pmem.PoolStore;
import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The kv engine passes the whole store contract without a store key and with one (then also the
 * encryption promises), plus what is particular to its pool file.
 */
class KvStoreTest {
  private static final EngineUnderTest ENGINE = EngineUnderTest.of(KvStore.ENGINE);

  @Nested
  class Encrypted extends EncryptedStoreContract {
    Encrypted() {
      super(ENGINE);
    }
  }

  @Nested
  class Plain extends ObjectStoreContract {
    Plain() {
      super(ENGINE);
    }

    @Test
    void aPoolFileThatIsNotAnLlplHeapIsRefusedAndLeftUntouched() throws Exception {
      // setup
      store.close();
      Path pool = poolDir.resolve(KvStore.POOL_FILE);
      byte[] garbage = "not a pmem pool".repeat(1000).getBytes(StandardCharsets.UTF_8);
      Files.write(pool, garbage);
      // run
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> open(poolSize()));
      // verify
      assertTrue(e.getMessage().contains(pool.toString()), e.getMessage());
      assertArrayEquals(garbage, Files.readAllBytes(pool));
      store = ObjectStores.open(new StoreConfig("memory", null, 1));
    }

    @Test
    void anLlplHeapThatHoldsNoKvDirectoryIsRefusedWithItsContentUnchanged() throws Exception {
      // setup: a valid llpl heap with other content under the pool's name
      store.close();
      Path pool = poolDir.resolve(KvStore.POOL_FILE);
      Files.delete(pool);
      Heap foreign = Heap.createHeap(pool.toString(), 32L << 20);
      MemoryBlock block = foreign.allocateMemoryBlock(64, false);
      block.setLong(0, 42);
      foreign.setRoot(block.handle());
      PmemHeap.close(foreign);
      // run
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> open(poolSize()));
      // verify: PMDK rewrites its own run-time metadata on open, the heap's content is unchanged
      assertTrue(e.getMessage().contains("no kv object directory"), e.getMessage());
      Heap reopened = PmemHeap.open(pool);
      assertEquals(42, reopened.memoryBlockFromHandle(reopened.getRoot()).getLong(0));
      PmemHeap.close(reopened);
      Files.delete(pool);
      store = open(poolSize());
    }

    @Test
    void anUnfinishedPoolCreationIsDiscardedAndTheStoreCreatedAgain() throws Exception {
      store.close();
      Path other = TestPools.newPath();
      try {
        TestPools.directory(other);
        TestPools.writePrivate(other.resolve("ENGINE"), KvStore.ENGINE + "\n");
        TestPools.writePrivate(other.resolve(KvStore.POOL_FILE + ".creating"), "half made");

        try (ObjectStore created = ObjectStores.open(new StoreConfig(KvStore.ENGINE, other, poolSize()))) {
          UUID id = UUID.randomUUID();
          created.put(object(id, "a", "1"));
          assertEquals("1", text(created.get(id).orElseThrow().fields().get("a")));
        }

        assertFalse(Files.exists(other.resolve(KvStore.POOL_FILE + ".creating")));
        assertTrue(Files.isRegularFile(other.resolve(KvStore.POOL_FILE)));
      } finally {
        TestPools.delete(other);
        store = open(poolSize());
      }
    }

    @Test
    void aRemovalCutShortBeforeItsBlockWasZeroedIsFinishedAtTheNextOpen() {
      // setup: an object whose removal committed but whose erasure did not run (a crash in between)
      byte[] marker = ("cut-" + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8);
      UUID gone = UUID.randomUUID();
      UUID kept = UUID.randomUUID();
      store.put(object(kept, "a", "1"));
      long usedWithKeptOnly = store.stats().usedBytes();
      store.put(object(gone, Map.of("v", FieldValue.of(TestPools.repeated(marker, 100)))));
      ((PoolStore<?>) engineUnder(store)).removeWithoutErasing(gone);
      store.close();
      assertTrue(TestPools.filesContain(poolDir, marker));
      // run
      store = open(poolSize());
      // verify: gone, zeroed, freed; the other object untouched
      assertTrue(store.get(gone).isEmpty());
      assertEquals(1, store.count());
      assertFalse(TestPools.filesContain(poolDir, marker));
      assertEquals(usedWithKeptOnly, store.stats().usedBytes());
      assertEquals("1", text(store.get(kept).orElseThrow().fields().get("a")));
    }

    @Test
    void aPoolSmallerThanTheMinimumIsRefusedNamingIt() {
      store.close();
      TestPools.delete(poolDir);

      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> open(16L << 20));

      assertTrue(e.getMessage().contains("minimum"), e.getMessage());
      assertFalse(Files.exists(poolDir.resolve(KvStore.POOL_FILE)));
      store = open(poolSize());
    }

    @Test
    void anExistingPoolKeepsItsSizeWhateverSizeIsConfigured() {
      long capacity = store.stats().capacityBytes();
      store.close();

      store = open(poolSize() * 2);

      assertEquals(capacity, store.stats().capacityBytes());
      assertEquals(KvStore.DURABILITY, store.stats().durability());
    }
  }
}
