package io.dataclay.ds.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ObjectStoresTest {
  @Test
  void anUnknownEngineNameIsRefusedListingTheValidOnesAndNothingIsCreated() {
    Path path = TestPools.newPath();

    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> ObjectStores.open(new StoreConfig("pmemkv", path, 1L << 30)));

    assertTrue(e.getMessage().contains("'pmemkv'"), e.getMessage());
    assertTrue(e.getMessage().contains("kv, heap, 2lm, postgres, memory"), e.getMessage());
    assertFalse(Files.exists(path));
  }

  @Test
  void eachEngineNameOpensThatEngine() {
    Path path = TestPools.newPath();
    try {
      for (String engine : StoreEngines.names()) {
        if (engine.equals("postgres")) {
          continue; // needs a database server: PostgresStoreTest opens it
        }
        try (ObjectStore store = ObjectStores.open(new StoreConfig(engine, path.resolve(engine), 64L << 20))) {
          assertEquals(engine, store.stats().engine());
        }
      }
    } finally {
      TestPools.delete(path);
    }
  }

  @Test
  void aMissingConfigurationIsRefused() {
    assertThrows(InvalidArgumentException.class, () -> ObjectStores.open(null));
  }
}
