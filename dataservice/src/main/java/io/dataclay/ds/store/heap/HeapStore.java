package io.dataclay.ds.store.heap;

import com.intel.pmem.llpl.Heap;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.ds.store.crypt.StoreKey;
import io.dataclay.ds.store.engine.OptimisticRead;
import io.dataclay.ds.store.engine.PoolDirectory;
import io.dataclay.ds.store.engine.RecordCodec;
import io.dataclay.ds.store.pmem.PmemHeap;
import io.dataclay.ds.store.pmem.PmemPool;
import io.dataclay.ds.store.pmem.SlotDirectory;
import io.dataclay.ds.store.pmem.PoolObjects;
import io.dataclay.ds.store.pmem.PoolStore;
import io.dataclay.exceptions.InvalidArgumentException;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * The {@code heap} engine: objects laid out field by field in a PMDK pool (llpl {@link Heap}) at
 * {@code <pool dir>/heap.pool} (see {@link ObjectBlocks}), found through a persistent
 * {@link SlotDirectory}. A DRAM index holds each object's {@link ObjectLayout}, rebuilt at open,
 * so reads copy values straight out of their blocks and an update of one field writes that
 * field's bytes and nothing else: its cost grows with the field, not with the object. Every put,
 * putAll, applyDelta and remove is one PMDK transaction, so a crash at any instant leaves each
 * object old or new, never mixed. Objects whose values total up to {@value #OPTIMISTIC_READ_MAX}
 * bytes are read without any lock write.
 *
 * <p>With a store key, the pool admits it ({@link PoolDirectory}) and the values it is given are
 * already sealed, each on its own (see {@link io.dataclay.ds.store.crypt.Encryption}), so a change
 * to one field still writes that field alone, in place when its size stays. A removed object's bytes
 * are overwritten with zeros before its blocks are freed ({@link ObjectErasure}).
 */
public final class HeapStore implements PoolStore.Layout {
  /** Engine name in configuration. */
  public static final String ENGINE = "heap";
  /** Pool file inside the pool directory. */
  public static final String POOL_FILE = "heap.pool";

  private static final int OPTIMISTIC_READ_MAX = 64 * 1024;
  private static final long DIRECTORY_MAGIC = 0x4443_4845_4150_4431L; // "DCHEAPD1"
  // What the slot directory logs per change (see SlotDirectory), for the written-bytes count.
  private static final int SLOT_ASSIGN_BYTES = 24;
  private static final int SLOT_HANDLE_BYTES = 8;

  private final PmemPool pool;
  private final RecordCodec codec = new RecordCodec();
  private final ObjectBlocks blocks;
  private final PoolObjects<ObjectLayout> index;

  /** Loads the objects listed in {@code pool}. */
  private HeapStore(PmemPool pool) {
    this.pool = pool;
    this.blocks = new ObjectBlocks(pool.heap(), codec);
    this.index = new PoolObjects<>(pool, ObjectLayout::slot, ObjectLayout::poolBytes, ObjectLayout::header,
        new PoolObjects.Erasure<>(layout -> blocks.countWritten(ObjectErasure.markErasing(layout)), ObjectErasure::zero,
            layout -> {
              blocks.countWritten(SLOT_HANDLE_BYTES); // the slot's handle, emptied
              blocks.freeAll(layout);
            }));
    load();
  }

  /**
   * Opens the pool in {@code config.path()}, creating directory and pool ({@code sizeBytes}) when
   * missing; an existing pool keeps the size it was made with.
   *
   * @throws InvalidArgumentException when the directory or pool file cannot be used as a heap pool
   */
  public static PoolStore<HeapStore> open(StoreConfig config, StoreKey key) {
    HeapStore layout = PmemPool.open(config, ENGINE, key, POOL_FILE, DIRECTORY_MAGIC, ENGINE, HeapStore::new);
    return new PoolStore<>(ENGINE, layout.index, layout);
  }

  @Override
  public void putAll(List<StoredObject> objects) {
    int n = objects.size();
    ObjectHeader[] headers = new ObjectHeader[n];
    long bytes = 0;
    for (int i = 0; i < n; i++) {
      StoredObject object = objects.get(i);
      headers[i] = codec.canonical(object.header());
      bytes += object.valueBytes();
    }
    long total = bytes;
    index.writeAll(objects, batch -> {
      ObjectLayout[] layouts = new ObjectLayout[n];
      for (int i = 0; i < n; i++) {
        ObjectLayout old = batch.old(i);
        layouts[i] = blocks.writeNew(objects.get(i), headers[i], batch.slot(i));
        if (old == null) {
          pool.slots().assign(batch.slot(i), objects.get(i).id(), layouts[i].table().handle());
          blocks.countWritten(SLOT_ASSIGN_BYTES);
        } else {
          pool.slots().setHandle(batch.slot(i), layouts[i].table().handle());
          blocks.countWritten(SLOT_HANDLE_BYTES);
          blocks.freeAll(old);
        }
      }
      return layouts;
    }, () -> fullMessage(n, total));
  }

  @Override
  public Optional<StoredObject> get(UUID id) {
    // Objects whose values total up to OPTIMISTIC_READ_MAX are copied without a lock write.
    return OptimisticRead.read(index.locks().of(id), () -> index.get(id),
        layout -> layout.contentBytes() <= OPTIMISTIC_READ_MAX ? blocks.read(id, layout) : null,
        (layout, object) -> object, layout -> blocks.read(id, layout));
  }

  @Override
  public Optional<Set<UUID>> references(UUID id) {
    return OptimisticRead.locked(index.locks().of(id), () -> index.get(id), blocks::references);
  }

  @Override
  public void applyDelta(ObjectDelta delta) {
    UUID id = delta.id();
    index.locks().writing(id, () -> {
      ObjectLayout old = index.stored(id);
      ObjectLayout updated = PmemHeap.transaction(pool.heap(), () -> {
        ObjectLayout layout = blocks.applyDelta(old, delta);
        if (layout.table() != old.table()) {
          pool.slots().setHandle(old.slot(), layout.table().handle());
          blocks.countWritten(SLOT_HANDLE_BYTES);
        }
        return layout;
      }, () -> fullMessage(1, deltaBytes(delta)));
      index.replace(id, old, updated);
    });
  }

  /** Bytes this store has written to its pool since it was opened (values, tables, directory slots). */
  public long bytesWritten() {
    return blocks.bytesWritten();
  }

  private static long deltaBytes(ObjectDelta delta) {
    long total = 0;
    for (var value : delta.changed().values()) {
      total += ObjectBlocks.contentLength(value);
    }
    return total;
  }

  private String fullMessage(int objects, long bytes) {
    return "heap pool " + pool.file() + " is full: no room for " + objects + " object(s) with " + bytes
        + " bytes of values " + index.fullness();
  }

  private void load() {
    // an object block marked as being erased was removed before a crash: its erasure is finished here
    index.load((slot, id, handle) -> blocks.load(id, handle, slot), ObjectErasure::erasing);
  }
}
