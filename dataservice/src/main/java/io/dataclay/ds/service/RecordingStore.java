package io.dataclay.ds.service;

import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoreStats;
import io.dataclay.ds.store.StoredObject;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * The store as the Data Service writes it: every write (new objects, replacements, copies,
 * deltas) passes its references (a version's original among them) to the {@link ReferenceRecorder}
 * before it reaches the engine, so no write path can add a reference a garbage collection does not see.
 */
final class RecordingStore implements ObjectStore {
  private final ObjectStore engine;
  private final ReferenceRecorder recorder;

  RecordingStore(ObjectStore engine, ReferenceRecorder recorder) {
    this.engine = engine;
    this.recorder = recorder;
  }

  @Override
  public void put(StoredObject object) {
    recorder.gated(() -> recorder.record(object.header(), object.fields().values()), () -> engine.put(object));
  }

  @Override
  public void putAll(List<StoredObject> objects) {
    recorder.gated(() -> objects.forEach(o -> recorder.record(o.header(), o.fields().values())),
        () -> engine.putAll(objects));
  }

  @Override
  public void applyDelta(ObjectDelta delta) {
    recorder.gated(() -> recorder.record(null, delta.changed().values()), () -> engine.applyDelta(delta));
  }

  @Override
  public Optional<StoredObject> get(UUID id) {
    return engine.get(id);
  }

  @Override
  public Optional<Set<UUID>> references(UUID id) {
    return engine.references(id);
  }

  @Override
  public Optional<ObjectHeader> header(UUID id) {
    return engine.header(id);
  }

  @Override
  public boolean remove(UUID id) {
    return engine.remove(id);
  }

  @Override
  public long count() {
    return engine.count();
  }

  @Override
  public void forEachId(Consumer<UUID> action) {
    engine.forEachId(action);
  }

  @Override
  public StoreStats stats() {
    return engine.stats();
  }

  @Override
  public boolean writesWithoutWaiting() {
    return engine.writesWithoutWaiting();
  }

  @Override
  public void checkpoint() {
    engine.checkpoint();
  }

  @Override
  public void close() {
    engine.close();
  }
}
