package io.dataclay.ds.store.crypt;

import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ForwardingStore;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoreStats;
import io.dataclay.ds.store.StoredObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Encryption at rest as a layer over the storage of an engine: each field value is sealed by
 * {@link FieldCipher} on its way in (put, putAll, applyDelta) and opened on its way out (get).
 * Only values change; IDs, headers, field names and references stay readable, because engines and
 * garbage collection ({@link #references}) work with them without the key. Each value is sealed on
 * its own, so a delta stays a delta (the heap engine still writes one changed field in place) and
 * a same-sized value stays same-sized. What the engine stores is exactly what it stored when it
 * sealed values itself, so pools written before this layer existed open unchanged.
 */
final class SealingStore extends ForwardingStore {
  private final FieldCipher cipher;

  /** Seals what goes into {@code storage} with {@code cipher}. */
  SealingStore(ObjectStore storage, FieldCipher cipher) {
    super(storage);
    this.cipher = cipher;
  }

  @Override
  public void put(StoredObject object) {
    inner.put(seal(object));
  }

  @Override
  public void putAll(List<StoredObject> objects) {
    List<StoredObject> sealed = new ArrayList<>(objects.size());
    for (StoredObject object : objects) {
      sealed.add(seal(object));
    }
    inner.putAll(sealed);
  }

  /**
   * The stored object with its values opened.
   *
   * @throws io.dataclay.exceptions.InternalException when a value fails decryption
   */
  @Override
  public Optional<StoredObject> get(UUID id) {
    return inner.get(id).map(stored -> new StoredObject(stored.id(), stored.header(),
        transform(stored.id(), stored.fields(), StoredObject.newFields(stored.fields().size()), false)));
  }

  @Override
  public void applyDelta(ObjectDelta delta) {
    inner.applyDelta(new ObjectDelta(delta.id(),
        transform(delta.id(), delta.changed(), new LinkedHashMap<>(), true), delta.removed()));
  }

  /** The storage's stats, saying the store is encrypted. */
  @Override
  public StoreStats stats() {
    StoreStats s = inner.stats();
    return new StoreStats(s.engine(), s.durability(), s.path(), s.capacityBytes(), s.usedBytes(), s.objects(), true);
  }

  private StoredObject seal(StoredObject object) {
    return new StoredObject(object.id(), object.header(),
        transform(object.id(), object.fields(), StoredObject.newFields(object.fields().size()), true));
  }

  private Map<String, FieldValue> transform(UUID id, Map<String, FieldValue> from, Map<String, FieldValue> to,
      boolean seal) {
    for (Map.Entry<String, FieldValue> e : from.entrySet()) {
      FieldValue f = e.getValue();
      byte[] value = seal ? cipher.seal(id, e.getKey(), f.value()) : cipher.open(id, e.getKey(), f.value());
      to.put(e.getKey(), new FieldValue(value, f.references()));
    }
    return to;
  }
}
