package io.dataclay.ds.store;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * A store that passes every call to {@code inner}: the base of the Data Service's layers over its
 * engine (recording references, gating writes for snapshots, counting quotas), each of which
 * overrides only the calls it acts on.
 */
public abstract class ForwardingStore implements ObjectStore {
  /** The store underneath. */
  protected final ObjectStore inner;

  /** A layer over {@code inner}. */
  protected ForwardingStore(ObjectStore inner) {
    this.inner = inner;
  }

  @Override
  public void put(StoredObject object) {
    inner.put(object);
  }

  @Override
  public void putAll(List<StoredObject> objects) {
    inner.putAll(objects);
  }

  @Override
  public Optional<StoredObject> get(UUID id) {
    return inner.get(id);
  }

  @Override
  public Optional<Set<UUID>> references(UUID id) {
    return inner.references(id);
  }

  @Override
  public Optional<ObjectHeader> header(UUID id) {
    return inner.header(id);
  }

  @Override
  public void applyDelta(ObjectDelta delta) {
    inner.applyDelta(delta);
  }

  @Override
  public boolean remove(UUID id) {
    return inner.remove(id);
  }

  @Override
  public long count() {
    return inner.count();
  }

  @Override
  public void forEachId(Consumer<UUID> action) {
    inner.forEachId(action);
  }

  @Override
  public StoreStats stats() {
    return inner.stats();
  }

  @Override
  public java.util.List<EngineFigure> figures() {
    return inner.figures();
  }

  @Override
  public boolean writesWithoutWaiting() {
    return inner.writesWithoutWaiting();
  }

  @Override
  public void checkpoint() {
    inner.checkpoint();
  }

  @Override
  public void close() {
    inner.close();
  }
}
