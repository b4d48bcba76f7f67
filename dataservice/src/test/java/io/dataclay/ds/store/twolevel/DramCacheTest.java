package io.dataclay.ds.store.twolevel;

import static io.dataclay.ds.store.TestObjects.object;
import static io.dataclay.ds.store.TestObjects.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.ds.store.ForwardingStore;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.ds.store.TestPools;
import io.dataclay.ds.store.kv.KvStore;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.StampedLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The DRAM level of 2lm while a write-back is in NVRAM: the NVRAM level is a real kv pool whose
 * putAll can be held at a gate, so the test sees what the cache does in the middle of it.
 */
class DramCacheTest {
  private Path poolDir;
  private GatedStore nvram;
  private DramCache cache;

  @BeforeEach
  void open() {
    poolDir = TestPools.newPath();
    nvram = new GatedStore(KvStore.open(new StoreConfig(KvStore.ENGINE, poolDir, 64L << 20), null));
    cache = new DramCache(nvram, 8L << 20);
  }

  @AfterEach
  void close() {
    try {
      nvram.close();
    } finally {
      TestPools.delete(poolDir);
    }
  }

  @Test
  void aCheckpointWritingBackDoesNotHoldTheObjectLockAndKeepsALaterWriteDirty() throws Exception {
    // setup: an object dirty in DRAM, and a checkpoint held inside its NVRAM transaction
    UUID id = UUID.randomUUID();
    StoredObject first = object(id, "n", "1");
    cache.set(id, null, Cell.cached(first, true));
    nvram.closeGate();
    CompletableFuture<Void> checkpoint = CompletableFuture.runAsync(cache::writeBackAll);
    assertTrue(nvram.entered.await(10, TimeUnit.SECONDS), "the checkpoint never reached NVRAM");

    // run: a writer changes the object in DRAM meanwhile, as TwoLevelStore.applyDelta does
    StampedLock lock = cache.locks.of(id);
    long stamp = lock.tryWriteLock();
    assertNotEquals(0, stamp, "the object lock is held while NVRAM is written");
    try {
      cache.set(id, cache.cells.get(id), Cell.cached(object(id, "n", "2"), true));
    } finally {
      lock.unlockWrite(stamp);
    }
    nvram.openGate();
    checkpoint.get(10, TimeUnit.SECONDS);

    // verify: NVRAM has the state the checkpoint saw; the newer one is still dirty, then written
    assertEquals("1", text(nvram.get(id).orElseThrow().fields().get("n")));
    assertEquals(1, cache.dirtyCount());
    assertTrue(cache.cells.get(id).dirty);
    cache.writeBackAll();
    assertEquals("2", text(nvram.get(id).orElseThrow().fields().get("n")));
    assertEquals(0, cache.dirtyCount());
  }

  @Test
  void evictionPassesOverARecordACheckpointIsWritingAndEvictsCleanOnes() throws Exception {
    // setup: one dirty object held in a checkpoint's NVRAM write, one clean object, no reference bits
    UUID busy = UUID.randomUUID();
    UUID clean = UUID.randomUUID();
    cache.set(busy, null, Cell.cached(object(busy, "n", "1"), true));
    StoredObject cleanObject = object(clean, "n", "c");
    nvram.put(cleanObject);
    cache.set(clean, null, Cell.cached(cleanObject, false));
    cache.cells.get(busy).referenced = false;
    cache.cells.get(clean).referenced = false;
    nvram.closeGate();
    CompletableFuture<Void> checkpoint = CompletableFuture.runAsync(cache::writeBackAll);
    assertTrue(nvram.entered.await(10, TimeUnit.SECONDS), "the checkpoint never reached NVRAM");

    // run: make room for everything cached but the clean object's share
    long busyBytes = cache.cells.get(busy).bytes;
    cache.makeRoom((8L << 20) - busyBytes);

    // verify: the clean object left without waiting; the one being written back is still cached
    assertEquals(null, cache.cells.get(clean).cached);
    assertTrue(cache.cells.get(busy).cached != null);
    nvram.openGate();
    checkpoint.get(10, TimeUnit.SECONDS);
    assertEquals(0, cache.dirtyCount());
    assertEquals("1", text(nvram.get(busy).orElseThrow().fields().get("n")));
  }

  @Test
  void evictionWritesTheDirtyRecordsItMeetsBackTogetherThenDropsThem() {
    // setup: ten dirty records, none referenced
    List<UUID> ids = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      UUID id = UUID.randomUUID();
      ids.add(id);
      cache.set(id, null, Cell.cached(object(id, "n", Integer.toString(i)), true));
      cache.cells.get(id).referenced = false;
    }

    // run: make room for the whole cache
    cache.makeRoom(8L << 20);

    // verify: all written back in one NVRAM transaction, and out of DRAM
    assertEquals(1, nvram.putAlls.get());
    assertEquals(0, cache.cachedBytes());
    assertEquals(0, cache.dirtyCount());
    for (int i = 0; i < 10; i++) {
      assertEquals(Integer.toString(i), text(nvram.get(ids.get(i)).orElseThrow().fields().get("n")));
      assertEquals(null, cache.cells.get(ids.get(i)).cached);
    }
  }

  /** A real store whose putAll stops at a closed gate until it is opened. */
  private static final class GatedStore extends ForwardingStore {
    final CountDownLatch entered = new CountDownLatch(1);
    final AtomicInteger putAlls = new AtomicInteger();
    private volatile CountDownLatch gate = new CountDownLatch(0);

    GatedStore(ObjectStore store) {
      super(store);
    }

    void closeGate() {
      gate = new CountDownLatch(1);
    }

    void openGate() {
      gate.countDown();
    }

    @Override
    public void putAll(List<StoredObject> objects) {
      putAlls.incrementAndGet();
      CountDownLatch current = gate;
      if (current.getCount() > 0) {
        entered.countDown();
        try {
          if (!current.await(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("gate never opened");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }
      inner.putAll(objects);
    }
  }
}
