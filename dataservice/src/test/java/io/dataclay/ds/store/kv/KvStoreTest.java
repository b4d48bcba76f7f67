package io.dataclay.ds.store.kv;

import static io.dataclay.ds.store.TestObjects.object;
import static io.dataclay.ds.store.TestObjects.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.intel.pmem.llpl.Heap;
import com.intel.pmem.llpl.MemoryBlock;
import io.dataclay.ds.store.EncryptedStoreContract;
import io.dataclay.ds.store.EngineUnderTest;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.TestPools;
import io.dataclay.ds.store.pmem.PmemHeap;
import io.dataclay.ds.store.pmem.PoolStore;
import io.dataclay.ds.store.pmem.PoolStoreContract;
import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.file.Files;
import java.nio.file.Path;
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
  class Plain extends PoolStoreContract {
    Plain() {
      super(ENGINE, KvStore.POOL_FILE);
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
      assertEquals(PoolStore.DURABILITY, store.stats().durability());
    }
  }
}
