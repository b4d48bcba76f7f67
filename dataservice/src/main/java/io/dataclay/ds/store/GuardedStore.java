package io.dataclay.ds.store;

import io.dataclay.ds.store.engine.CloseGuard;
import io.dataclay.ds.store.engine.RecordCodec;
import io.dataclay.exceptions.InvalidArgumentException;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * The layer {@link ObjectStores} puts over every engine: it refuses missing or malformed
 * arguments (a missing ID, object, delta or action; a batch with a gap or an ID twice; a field
 * without name or value) before the engine sees them, and it lets the engine close only when no
 * call is inside it ({@link CloseGuard}): a pmem engine unmaps its pool on close, and a call still
 * reading the mapping then would crash the whole JVM. So engines check neither.
 */
final class GuardedStore extends ForwardingStore {
  private final CloseGuard guard;

  /** Guards {@code engine}, named in the "closed" error as its stats name it. */
  GuardedStore(ObjectStore engine) {
    super(engine);
    StoreStats stats = engine.stats();
    this.guard = new CloseGuard(stats.engine() + " store " + stats.path());
  }

  @Override
  public void put(StoredObject object) {
    RecordCodec.check(object);
    guard.run(() -> inner.put(object));
  }

  @Override
  public void putAll(List<StoredObject> objects) {
    RecordCodec.batchIds(objects);
    for (StoredObject object : objects) {
      RecordCodec.check(object);
    }
    guard.run(() -> inner.putAll(objects));
  }

  @Override
  public Optional<StoredObject> get(UUID id) {
    checkId(id);
    return guard.call(() -> inner.get(id));
  }

  @Override
  public Optional<Set<UUID>> references(UUID id) {
    checkId(id);
    return guard.call(() -> inner.references(id));
  }

  @Override
  public Optional<ObjectHeader> header(UUID id) {
    checkId(id);
    guard.checkOpen();
    return inner.header(id);
  }

  @Override
  public void applyDelta(ObjectDelta delta) {
    RecordCodec.check(delta);
    guard.run(() -> inner.applyDelta(delta));
  }

  @Override
  public boolean remove(UUID id) {
    checkId(id);
    return guard.call(() -> inner.remove(id));
  }

  @Override
  public long count() {
    guard.checkOpen();
    return inner.count();
  }

  @Override
  public void forEachId(Consumer<UUID> action) {
    if (action == null) {
      throw new InvalidArgumentException("action is missing");
    }
    guard.checkOpen();
    inner.forEachId(action);
  }

  @Override
  public StoreStats stats() {
    guard.checkOpen();
    return inner.stats();
  }

  @Override
  public void checkpoint() {
    guard.run(inner::checkpoint);
  }

  /** Refuses new calls, waits for those inside, then closes the engine; a second close does nothing. */
  @Override
  public void close() {
    if (guard.close()) {
      inner.close();
    }
  }

  private static void checkId(UUID id) {
    if (id == null) {
      throw new InvalidArgumentException("object ID is missing");
    }
  }
}
