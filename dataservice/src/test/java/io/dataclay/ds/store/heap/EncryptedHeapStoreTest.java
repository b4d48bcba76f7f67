package io.dataclay.ds.store.heap;

import static io.dataclay.ds.store.TestObjects.object;
import static io.dataclay.ds.store.TestObjects.text;
import static io.dataclay.ds.store.TestObjects.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.ds.store.EncryptedStoreContract;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.ds.store.crypt.FieldCipher;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The heap engine with a store key passes the whole store contract and the encryption promises;
 * and it keeps its own: values are sealed one by one, so a change to one field of a large object
 * still writes that field in place, not the object.
 */
class EncryptedHeapStoreTest extends EncryptedStoreContract {
  @Override
  protected String engine() {
    return HeapStore.ENGINE;
  }

  @Test
  void updatingOneSmallFieldOfALargeEncryptedObjectWritesOnlyThatFieldInPlace() {
    // setup
    UUID id = UUID.randomUUID();
    byte[] blob = new byte[1 << 20];
    new Random(1).nextBytes(blob);
    Map<String, FieldValue> fields = new LinkedHashMap<>();
    fields.put("blob", FieldValue.of(blob.clone()));
    fields.put("counter", value("00000001"));
    store.put(object(id, fields));
    HeapStore heap = (HeapStore) engineUnder(store);
    long before = heap.bytesWritten();
    // run
    store.applyDelta(new ObjectDelta(id, Map.of("counter", value("00000002")), Set.of()));
    // verify: the sealed 8-byte value and its entry's lengths, nothing of the megabyte
    long written = heap.bytesWritten() - before;
    assertTrue(written <= 32 + FieldCipher.OVERHEAD, "one 8-byte field update wrote " + written + " bytes");
    StoredObject got = store.get(id).orElseThrow();
    assertEquals("00000002", text(got.fields().get("counter")));
    assertArrayEquals(blob, got.fields().get("blob").value());
  }
}
