package io.dataclay.ds.objects;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.Language;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.QuotaExceededException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class QuotaStoreTest {
  private final ObjectStore engine = ObjectStores.open(new StoreConfig("memory", null, 16 << 20));

  private static StoredObject object(String dataset, int bytes) {
    return new StoredObject(UUID.randomUUID(), ObjectHeader.of("m.C", Language.PYTHON, dataset),
        Map.of("data", FieldValue.of(new byte[bytes])));
  }

  @Test
  void a_dataset_at_its_object_quota_is_refused_and_nothing_of_the_batch_is_stored() {
    // setup
    QuotaStore store = new QuotaStore(engine, new QuotaStore.Limits(3, 0, 1 << 20));
    store.putAll(List.of(object("alice", 1), object("alice", 1)));
    StoredObject third = object("alice", 1);
    StoredObject fourth = object("alice", 1);
    // run
    QuotaExceededException e = assertThrows(QuotaExceededException.class, () -> store.putAll(List.of(third, fourth)));
    store.put(object("bob", 1));
    // verify
    assertTrue(e.getMessage().contains("DATACLAY_QUOTA_OBJECTS") && e.getMessage().contains("holds 2 objects"),
        e.getMessage());
    assertFalse(engine.header(third.id()).isPresent());
    assertEquals(3, engine.count());
  }

  @Test
  void removed_objects_give_their_place_back_and_the_count_is_rebuilt_at_start() {
    // setup
    QuotaStore store = new QuotaStore(engine, new QuotaStore.Limits(2, 0, 1 << 20));
    StoredObject a = object("alice", 1);
    store.putAll(List.of(a, object("alice", 1)));
    // run
    assertTrue(store.remove(a.id()));
    store.put(object("alice", 1));
    QuotaStore restarted = new QuotaStore(engine, new QuotaStore.Limits(2, 0, 1 << 20));
    // verify
    assertArrayEquals(new long[] {2, 0}, restarted.usageOf("alice"));
    assertThrows(QuotaExceededException.class, () -> restarted.put(object("alice", 1)));
  }

  @Test
  void a_delta_that_grows_a_dataset_past_its_byte_quota_is_refused_and_a_shrinking_one_passes() {
    // setup
    QuotaStore store = new QuotaStore(engine, new QuotaStore.Limits(0, 1000, 1 << 20));
    StoredObject a = object("alice", 600);
    store.put(a);
    // run
    assertThrows(QuotaExceededException.class,
        () -> store.applyDelta(new ObjectDelta(a.id(), Map.of("data", FieldValue.of(new byte[1200])), Set.of())));
    store.applyDelta(new ObjectDelta(a.id(), Map.of("data", FieldValue.of(new byte[900])), Set.of()));
    // verify
    assertEquals(900, engine.get(a.id()).orElseThrow().valueBytes());
    assertArrayEquals(new long[] {1, 900}, store.usageOf("alice"));
    assertThrows(QuotaExceededException.class, () -> store.put(object("alice", 200)));
  }

  @Test
  void a_value_above_the_cap_is_refused_naming_the_field_and_the_setting() {
    // setup
    QuotaStore store = new QuotaStore(engine, new QuotaStore.Limits(0, 0, 1024));
    StoredObject big = object("alice", 2048);
    // run
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> store.put(big));
    // verify
    assertTrue(e.getMessage().contains("field 'data'") && e.getMessage().contains("DATACLAY_MAX_VALUE_SIZE")
        && e.getMessage().contains("2,048"), e.getMessage());
    assertFalse(engine.header(big.id()).isPresent());
  }
}
