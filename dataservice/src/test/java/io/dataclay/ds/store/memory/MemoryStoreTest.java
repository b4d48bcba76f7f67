package io.dataclay.ds.store.memory;

import static io.dataclay.ds.store.TestObjects.object;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.dataclay.ds.store.EngineUnderTest;
import io.dataclay.ds.store.ObjectStoreContract;
import java.nio.file.Files;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The memory engine passes the store contract except durability, which it does not promise. */
class MemoryStoreTest extends ObjectStoreContract {
  MemoryStoreTest() {
    super(EngineUnderTest.of(MemoryStore.ENGINE).notDurable());
  }

  @Test
  void nothingSurvivesAReopenAndThePoolDirectoryIsNotTouched() {
    store.put(object(UUID.randomUUID(), "a", "1"));
    store.close();

    store = open(poolSize());

    assertEquals(0, store.count());
    assertEquals(MemoryStore.DURABILITY, store.stats().durability());
    assertFalse(Files.exists(poolDir));
  }
}
