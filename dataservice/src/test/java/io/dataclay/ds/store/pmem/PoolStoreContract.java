package io.dataclay.ds.store.pmem;

import static io.dataclay.ds.store.TestObjects.object;
import static io.dataclay.ds.store.TestObjects.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.ds.store.EngineUnderTest;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectStoreContract;
import io.dataclay.ds.store.TestPools;
import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The store contract plus what every pmem engine ({@link PoolStore}) promises about its pool file:
 * a file that is not an llpl heap is refused untouched, and a removal a crash cut short is
 * finished at the next open.
 */
public abstract class PoolStoreContract extends ObjectStoreContract {
  private final String poolFile;

  /** The contract for {@code engine}, whose pool is {@code poolFile} in the pool directory. */
  protected PoolStoreContract(EngineUnderTest engine, String poolFile) {
    super(engine);
    this.poolFile = poolFile;
  }

  @Test
  void aPoolFileThatIsNotAnLlplHeapIsRefusedAndLeftUntouched() throws Exception {
    // setup
    store.close();
    Path pool = poolDir.resolve(poolFile);
    byte[] garbage = "not a pmem pool".repeat(1000).getBytes(StandardCharsets.UTF_8);
    Files.write(pool, garbage);
    // run
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> open(poolSize()));
    // verify
    assertTrue(e.getMessage().contains(pool.toString()), e.getMessage());
    assertArrayEquals(garbage, Files.readAllBytes(pool));
    Files.delete(pool);
    store = open(poolSize());
  }

  @Test
  void aRemovalCutShortBeforeItsBytesWereZeroedIsFinishedAtTheNextOpen() {
    // setup: an object (a small and a large value) whose removal committed, erasure not run
    byte[] marker = ("cut-" + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8);
    UUID gone = UUID.randomUUID();
    UUID kept = UUID.randomUUID();
    store.put(object(kept, "a", "1"));
    long usedWithKeptOnly = store.stats().usedBytes();
    store.put(object(gone, Map.of("small", FieldValue.of(marker.clone()), "large",
        FieldValue.of(TestPools.repeated(marker, 100)))));
    ((PoolStore<?>) engineUnder(store)).removeWithoutErasing(gone);
    store.close();
    assertTrue(TestPools.filesContain(poolDir, marker));
    // run
    store = open(poolSize());
    // verify: gone, zeroed, freed; the other object untouched
    assertTrue(store.get(gone).isEmpty());
    assertEquals(1, store.count());
    assertFalse(TestPools.filesContain(poolDir, marker), "the removed object's bytes are still in the pool");
    assertEquals(usedWithKeptOnly, store.stats().usedBytes());
    assertEquals("1", text(store.get(kept).orElseThrow().fields().get("a")));
  }
}
