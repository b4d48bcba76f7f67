package io.dataclay.ds.store.twolevel;

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
import io.dataclay.ds.store.ObjectStoreContract;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.kv.KvStore;
import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The 2lm engine passes the store contract without a store key and with one, its crash test
 * included in the form it promises (durable at checkpoint), with a cache small enough that the
 * contract's tests evict and write back; on top, what its DRAM level does.
 */
class TwoLevelStoreTest {
  private static final long CACHE_BYTES = 2L << 20;
  private static final long CHECKPOINT_MS = 200;
  private static final EngineUnderTest ENGINE = EngineUnderTest.of(TwoLevelStore.ENGINE).notCrashConsistent()
      .with(c -> c.withCache(CACHE_BYTES, CHECKPOINT_MS));

  @Nested
  class Plain extends ObjectStoreContract {
    private static final long NEVER_MS = 3_600_000;

    Plain() {
      super(ENGINE);
    }

    @Test
    void writesWaitInDramForACheckpointAndStatsSayWhatACrashWouldLose() {
      // setup: no periodic checkpoint during the test
      reopenWithCheckpointsEvery(NEVER_MS);
      for (int i = 0; i < 3; i++) {
        store.put(object(UUID.randomUUID(), "v", "x".repeat(100)));
      }
      // run + verify
      String before = store.stats().durability();
      store.checkpoint();
      String after = store.stats().durability();
      assertTrue(before.contains("last " + NEVER_MS + " ms"), before);
      assertTrue(before.contains(" 3 record(s)"), before);
      assertTrue(after.contains(" 0 record(s)"), after);
      assertEquals(3, store.count());
    }

    @Test
    void theCacheStaysWithinItsSizeAndEvictedRecordsAreWrittenBack() {
      // setup
      reopenWithCheckpointsEvery(NEVER_MS);
      List<UUID> ids = new ArrayList<>();
      // run: five times the cache in 32 KiB objects, each changed once after it was written
      for (int i = 0; i < 320; i++) {
        UUID id = UUID.randomUUID();
        ids.add(id);
        store.put(object(id, Map.of("blob", FieldValue.of(filled(32 * 1024, i)), "n", value("0"))));
        store.applyDelta(new ObjectDelta(id, Map.of("n", value(Integer.toString(i))), Set.of()));
        assertTrue(twoLevel().cachedBytes() <= CACHE_BYTES, "cache holds " + twoLevel().cachedBytes() + " bytes");
      }
      store.close();
      store = open(poolSize());
      // verify: what was evicted and what was still cached at close, all of it is in NVRAM
      assertEquals(320, store.count());
      for (int i = 0; i < ids.size(); i++) {
        var got = store.get(ids.get(i)).orElseThrow();
        assertEquals(Integer.toString(i), text(got.fields().get("n")));
        assertArrayEquals(filled(32 * 1024, i), got.fields().get("blob").value());
      }
    }

    @Test
    void aRecordLargerThanAQuarterOfTheCacheIsWrittenThroughAtOnce() {
      reopenWithCheckpointsEvery(NEVER_MS);
      UUID id = UUID.randomUUID();

      store.put(object(id, Map.of("blob", FieldValue.of(filled((int) CACHE_BYTES, 7)))));

      assertTrue(store.stats().durability().contains(" 0 record(s)"), store.stats().durability());
      assertEquals(0, twoLevel().cachedBytes());
      assertArrayEquals(filled((int) CACHE_BYTES, 7), store.get(id).orElseThrow().fields().get("blob").value());
    }

    @Test
    void aKvPoolIsNotOpenedAs2lmNorTheOtherWayRound() throws Exception {
      store.put(object(UUID.randomUUID(), "a", "1"));
      store.close();

      InvalidArgumentException asKv = assertThrows(InvalidArgumentException.class,
          () -> ObjectStores.open(new StoreConfig(KvStore.ENGINE, poolDir, poolSize())));

      assertTrue(asKv.getMessage().contains("'2lm'"), asKv.getMessage());
      assertEquals("2lm\n", Files.readString(poolDir.resolve("ENGINE")));
      store = open(poolSize());
      assertEquals(1, store.count());
    }

    private void reopenWithCheckpointsEvery(long ms) {
      store.close();
      store = ObjectStores.open(config(poolDir, poolSize()).withCache(CACHE_BYTES, ms));
    }

    private TwoLevelStore twoLevel() {
      return (TwoLevelStore) engineUnder(store);
    }

    private static byte[] filled(int n, int seed) {
      byte[] b = new byte[n];
      Arrays.fill(b, (byte) seed);
      b[0] = (byte) (seed >> 8);
      return b;
    }
  }

  @Nested
  class Encrypted extends EncryptedStoreContract {
    Encrypted() {
      super(ENGINE);
    }
  }
}
