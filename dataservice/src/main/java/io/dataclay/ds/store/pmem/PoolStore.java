package io.dataclay.ds.store.pmem;

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
 * The store of a pmem engine (kv, heap): its {@link Layout} writes, reads and changes the objects
 * the way that engine lays them out in the pool; everything else (headers, removal, counts,
 * statistics, closing) is kept the same way for every such engine by the layout's
 * {@link PoolObjects}.
 *
 * @param <L> the engine's layout
 */
public final class PoolStore<L extends PoolStore.Layout> implements ObjectStore {
  /** How a pmem engine lays objects out in its pool: the calls of {@link ObjectStore} that depend on it. */
  public interface Layout {
    /** See {@link ObjectStore#putAll}. */
    void putAll(List<StoredObject> objects);

    /** See {@link ObjectStore#get}. */
    Optional<StoredObject> get(UUID id);

    /** See {@link ObjectStore#references}. */
    Optional<Set<UUID>> references(UUID id);

    /** See {@link ObjectStore#applyDelta}. */
    void applyDelta(ObjectDelta delta);
  }

  /**
   * The durability promise of every pmem engine, reported in stats: each call is one PMDK
   * transaction ({@link PoolObjects#writeAll}, {@link PoolObjects#remove}, the engines' deltas).
   */
  public static final String DURABILITY = "durable and crash-consistent at return";

  private final String engine;
  private final PoolObjects<?> objects;
  private final L layout;

  /** The store of {@code engine} over {@code layout}, loaded, and the {@code objects} it keeps. */
  public PoolStore(String engine, PoolObjects<?> objects, L layout) {
    this.engine = engine;
    this.objects = objects;
    this.layout = layout;
  }

  /** The engine's own part, for what only that engine has (its counters, its record lengths). */
  public L layout() {
    return layout;
  }

  @Override
  public void putAll(List<StoredObject> objects) {
    layout.putAll(objects);
  }

  @Override
  public Optional<StoredObject> get(UUID id) {
    return layout.get(id);
  }

  @Override
  public Optional<Set<UUID>> references(UUID id) {
    return layout.references(id);
  }

  @Override
  public Optional<ObjectHeader> header(UUID id) {
    return objects.header(id);
  }

  @Override
  public void applyDelta(ObjectDelta delta) {
    layout.applyDelta(delta);
  }

  /** Removes the object, then overwrites its bytes with zeros and frees them (see {@link PoolObjects#remove}). */
  @Override
  public boolean remove(UUID id) {
    return objects.remove(id);
  }

  /** The first half of {@link #remove} alone, as a crash right after it leaves the pool; for tests. */
  public void removeWithoutErasing(UUID id) {
    objects.removeWithoutErasing(id);
  }

  @Override
  public long count() {
    return objects.count();
  }

  @Override
  public void forEachId(Consumer<UUID> action) {
    objects.forEachId(action);
  }

  @Override
  public StoreStats stats() {
    return objects.stats(engine, DURABILITY);
  }

  @Override
  public void close() {
    objects.close();
  }
}
