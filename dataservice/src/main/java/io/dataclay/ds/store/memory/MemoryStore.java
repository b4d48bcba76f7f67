package io.dataclay.ds.store.memory;

import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoreStats;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The {@code memory} engine: objects in a DRAM hash map, nothing persisted (the benchmark
 * baseline). Same semantics as the other engines otherwise: values are copied in and out, so a
 * caller changing an array it handed over or got back does not change what is stored. It keeps
 * nothing in the pool directory and does not touch it. Nothing is at rest, so a configured store
 * key is not used (and stats say the store is not encrypted).
 */
public final class MemoryStore implements ObjectStore {
  /** Engine name in configuration. */
  public static final String ENGINE = "memory";
  /** The durability promise reported in stats. */
  public static final String DURABILITY = "none (DRAM only)";

  private final ConcurrentHashMap<UUID, StoredObject> objects = new ConcurrentHashMap<>();
  private final AtomicLong valueBytes = new AtomicLong();
  private final String path;

  private MemoryStore(Path path) {
    this.path = path == null ? "" : path.toString();
  }

  /** An empty store; {@code config.path()} is only reported in stats. */
  public static MemoryStore open(StoreConfig config) {
    return new MemoryStore(config.path());
  }

  @Override
  public void put(StoredObject object) {
    store(object);
  }

  @Override
  public void putAll(List<StoredObject> objects) {
    // The arguments were checked before the call (GuardedStore), so the batch cannot stop half-way.
    for (StoredObject object : objects) {
      store(object);
    }
  }

  @Override
  public Optional<StoredObject> get(UUID id) {
    StoredObject object = objects.get(id);
    return object == null ? Optional.empty() : Optional.of(object.deepCopy());
  }

  @Override
  public Optional<Set<UUID>> references(UUID id) {
    StoredObject object = objects.get(id);
    return object == null ? Optional.empty() : Optional.of(StoredObject.referencesOf(object.fields()));
  }

  @Override
  public Optional<ObjectHeader> header(UUID id) {
    StoredObject object = objects.get(id);
    return object == null ? Optional.empty() : Optional.of(object.header());
  }

  @Override
  public void applyDelta(ObjectDelta delta) {
    objects.compute(delta.id(), (id, old) -> {
      if (old == null) {
        throw new ObjectDoesNotExistException("object " + id + " is not stored in this memory store");
      }
      StoredObject updated = old.withDelta(delta);
      valueBytes.addAndGet(updated.valueBytes() - old.valueBytes());
      return updated;
    });
  }

  @Override
  public boolean remove(UUID id) {
    StoredObject old = objects.remove(id);
    if (old == null) {
      return false;
    }
    valueBytes.addAndGet(-old.valueBytes());
    return true;
  }

  @Override
  public long count() {
    return objects.size();
  }

  @Override
  public void forEachId(Consumer<UUID> action) {
    objects.keySet().forEach(action);
  }

  @Override
  public StoreStats stats() {
    return new StoreStats(ENGINE, DURABILITY, path, 0, valueBytes.get(), objects.size(), false);
  }

  @Override
  public void close() {
    objects.clear();
    valueBytes.set(0);
  }

  private void store(StoredObject object) {
    StoredObject copy = object.deepCopy();
    objects.compute(object.id(), (id, old) -> {
      valueBytes.addAndGet(copy.valueBytes() - (old == null ? 0 : old.valueBytes()));
      return copy;
    });
  }


}
