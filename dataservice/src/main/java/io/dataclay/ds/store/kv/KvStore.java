package io.dataclay.ds.store.kv;

import com.intel.pmem.llpl.Heap;
import com.intel.pmem.llpl.MemoryBlock;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoreStats;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.ds.store.crypt.StoreKey;
import io.dataclay.ds.store.engine.KeyLocks;
import io.dataclay.ds.store.engine.OptimisticRead;
import io.dataclay.ds.store.engine.PoolDirectory;
import io.dataclay.ds.store.engine.RecordCodec;
import io.dataclay.ds.store.engine.RecordEdit;
import io.dataclay.ds.store.engine.RecordInput;
import io.dataclay.ds.store.pmem.PmemHeap;
import io.dataclay.ds.store.pmem.PmemPool;
import io.dataclay.ds.store.pmem.SlotDirectory;
import io.dataclay.ds.store.pmem.SlotIndex;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The {@code kv} engine: each object is one encoded record in one block of a PMDK pool (llpl
 * {@link Heap}) at {@code <pool dir>/kv.pool}, found through a persistent {@link SlotDirectory};
 * a DRAM index (ID to block and cached header) is rebuilt from the directory at open, so reads
 * never search pmem. Every put, putAll, applyDelta and remove is one PMDK transaction, so a crash
 * at any instant leaves each object old or new, never mixed: a record is either overwritten in
 * place under an undo log (small records that fit their block) or written into a block allocated
 * in the transaction, the slot's handle swapped and the old block freed (see {@link RecordBlocks}).
 * Records up to {@value #BULK_READ_MAX} bytes are read with one bulk copy and no lock write.
 *
 * <p>With a store key, the pool admits it ({@link PoolDirectory}) and the values it is given are
 * already sealed (see {@link io.dataclay.ds.store.crypt.Encryption}); headers, names and
 * references stay readable. A removed object's
 * block is overwritten with zeros before it is freed (see {@link #remove}).
 */
public final class KvStore implements ObjectStore {
  /** Engine name in configuration. */
  public static final String ENGINE = "kv";
  /** Pool file inside the pool directory. */
  public static final String POOL_FILE = "kv.pool";
  /** The durability promise reported in stats. */
  public static final String DURABILITY = "durable and crash-consistent at return";

  private static final int BULK_READ_MAX = 64 * 1024;
  private static final Logger LOG = Logger.getLogger(KvStore.class.getName());
  private static final long DIRECTORY_MAGIC = 0x4443_4B56_4449_5231L; // "DCKVDIR1"

  /** Where an object's record is: its block, its length, its cached header, its directory slot. */
  private record Entry(MemoryBlock block, int length, ObjectHeader header, long slot) {}

  private final PmemPool pool;
  private final PoolDirectory directory;
  private final Path poolFile;
  private final Heap heap;
  private final SlotDirectory slots;
  private final RecordBlocks blocks;
  private final RecordCodec codec = new RecordCodec();
  private final SlotIndex<Entry> index;
  private final KeyLocks locks = new KeyLocks(1024);
  private final AtomicLong usedBytes = new AtomicLong();

  private KvStore(PmemPool pool) {
    this.pool = pool;
    this.directory = pool.directory();
    this.poolFile = pool.file();
    this.heap = pool.heap();
    this.slots = pool.slots();
    this.blocks = new RecordBlocks(heap);
    this.index = new SlotIndex<>(slots, Entry::slot);
  }

  /**
   * Opens the pool in {@code config.path()}, creating directory and pool ({@code sizeBytes}) when
   * missing; an existing pool keeps the size it was made with.
   *
   * @throws InvalidArgumentException when the directory or pool file cannot be used as a kv pool
   */
  public static KvStore open(StoreConfig config, StoreKey key) {
    return openFor(ENGINE, config, key);
  }

  /**
   * Opens a kv pool on behalf of {@code owner}, an engine built on this one (2lm): the directory's
   * engine marker names the owner, so neither engine opens the other's pool by mistake.
   *
   * @throws InvalidArgumentException when the directory or pool file cannot be used as such a pool
   */
  public static KvStore openFor(String owner, StoreConfig config, StoreKey key) {
    return PmemPool.open(config, owner, key, POOL_FILE, DIRECTORY_MAGIC, ENGINE, pool -> {
      KvStore store = new KvStore(pool);
      store.load();
      return store;
    });
  }

  @Override
  public void putAll(List<StoredObject> objects) {
    List<UUID> ids = objects.stream().map(StoredObject::id).toList();
    int n = ids.size();
    byte[][] records = new byte[n][];
    ObjectHeader[] headers = new ObjectHeader[n];
    for (int i = 0; i < n; i++) {
      records[i] = codec.encode(objects.get(i));
      headers[i] = codec.canonical(objects.get(i).header());
    }
    try (KeyLocks.Held held = locks.writeLockAll(ids)) {
      SlotIndex<Entry>.Batch batch = index.reserve(ids);
      Entry[] written;
      try {
        written = PmemHeap.transaction(heap, () -> {
          Entry[] entries = new Entry[n];
          for (int i = 0; i < n; i++) {
            entries[i] = store(ids.get(i), records[i], headers[i], batch.old(i), batch.slot(i));
          }
          return entries;
        }, () -> fullMessage(n, totalBytes(records)));
      } catch (RuntimeException e) {
        batch.releaseTaken(); // the transaction rolled back (or never ran): those slots are empty
        throw e;
      }
      for (int i = 0; i < n; i++) {
        Entry old = batch.old(i);
        index.put(ids.get(i), written[i]);
        usedBytes.addAndGet(written[i].block().size() - (old == null ? 0 : old.block().size()));
      }
    }
  }

  @Override
  public Optional<StoredObject> get(UUID id) {
    // Records up to BULK_READ_MAX are copied with one bulk read and no lock write; larger ones are
    // decoded straight from pmem under the read lock, each value copied once into its array.
    return OptimisticRead.read(locks.of(id), () -> index.get(id),
        entry -> entry.length() <= BULK_READ_MAX ? blocks.read(entry.block(), entry.length()) : null,
        (entry, record) -> codec.decode(id, RecordInput.of(record), entry.header()),
        entry -> codec.decode(id, blocks.input(entry.block(), entry.length()), entry.header()));
  }

  @Override
  public Optional<Set<UUID>> references(UUID id) {
    // Under the read lock: the block, read in place, does not change meanwhile.
    return OptimisticRead.locked(locks.of(id), () -> index.get(id),
        entry -> codec.references(id, blocks.input(entry.block(), entry.length())));
  }

  @Override
  public Optional<ObjectHeader> header(UUID id) {
    Entry entry = index.get(id);
    return entry == null ? Optional.empty() : Optional.of(entry.header());
  }

  /** Bytes of the stored record of {@code id}, or -1 when it is not stored; a DRAM lookup. */
  public int recordLength(UUID id) {
    Entry entry = index.get(id);
    return entry == null ? -1 : entry.length();
  }

  @Override
  public void applyDelta(ObjectDelta delta) {
    UUID id = delta.id();
    locks.writing(id, () -> {
      Entry old = index.get(id);
      if (old == null) {
        throw new ObjectDoesNotExistException("object " + id + " is not stored in " + directory.path());
      }
      RecordInput current = blocks.input(old.block(), old.length());
      RecordEdit edit = RecordEdit.plan(current, delta);
      Entry updated;
      if (edit.inPlace()) {
        PmemHeap.transaction(heap, () -> {
          blocks.patch(old.block(), edit);
          return null;
        }, () -> fullMessage(1, edit.length()));
        updated = old;
      } else if (blocks.fitsInPlace(old.block(), edit.length())) {
        byte[] record = edit.toArray(current);
        PmemHeap.transaction(heap, () -> {
          blocks.overwrite(old.block(), record);
          return null;
        }, () -> fullMessage(1, record.length));
        updated = new Entry(old.block(), record.length, old.header(), old.slot());
      } else {
        MemoryBlock block = PmemHeap.transaction(heap, () -> {
          MemoryBlock written = blocks.writeEdited(old.block(), edit);
          slots.setHandle(old.slot(), written.handle());
          blocks.free(old.block());
          return written;
        }, () -> fullMessage(1, edit.length()));
        updated = new Entry(block, edit.length(), old.header(), old.slot());
      }
      index.put(id, updated);
      usedBytes.addAndGet(updated.block().size() - old.block().size());
    });
  }

  /**
   * Removes the object, then overwrites its block with zeros and frees it. The removal is one
   * transaction that marks the block as being erased (so it is durable when this returns); the
   * zeros are written outside it, without an undo log of the whole block (which a nearly full
   * pool may have no room for), and a second transaction frees the block and empties the slot. A
   * crash in between leaves a marked block that {@link #open} erases and frees; the object never
   * comes back half-zeroed.
   */
  @Override
  public boolean remove(UUID id) {
    return locks.writing(id, () -> {
      Entry old = index.get(id);
      if (old == null) {
        return false;
      }
      PmemHeap.transaction(heap, () -> {
        blocks.markErasing(old.block());
        return null;
      }, () -> "pool " + poolFile + " has no room left even for the log of a removal");
      index.remove(id);
      finishErasure(id, old.slot(), old.block());
      return true;
    });
  }

  /** The first half of {@link #remove} alone, as a crash right after it leaves the pool; for tests. */
  void removeWithoutErasing(UUID id) {
    Entry old = index.remove(id);
    PmemHeap.transaction(heap, () -> {
      blocks.markErasing(old.block());
      return null;
    }, () -> "no room");
  }

  // Zeroes a block whose removal committed, then frees it and empties its slot. If that fails, the
  // block stays marked and its slot taken until the next open finishes the erasure.
  private void finishErasure(UUID id, long slot, MemoryBlock block) {
    try {
      blocks.zero(block);
      PmemHeap.transaction(heap, () -> {
        slots.setHandle(slot, 0);
        blocks.free(block);
        return null;
      }, () -> "pool " + poolFile + " has no room left even for the log of a removal");
      slots.release(slot);
      usedBytes.addAndGet(-block.size());
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "object " + id + " was removed from " + poolFile
          + " but its block was not yet zeroed and freed; the next open does it: " + e.getMessage());
    }
  }

  @Override
  public long count() {
    return index.size();
  }

  @Override
  public void forEachId(Consumer<UUID> action) {
    index.forEachId(action);
  }

  @Override
  public StoreStats stats() {
    return new StoreStats(ENGINE, DURABILITY, directory.path().toString(), heap.size(),
        usedBytes.get() + slots.bytes(), index.size(), directory.encrypted());
  }

  @Override
  public void close() {
    pool.close();
  }

  /** Stores one object's record and returns its new entry; runs inside the caller's transaction. */
  private Entry store(UUID id, byte[] record, ObjectHeader header, Entry old, long slot) {
    if (old != null && blocks.fitsInPlace(old.block(), record.length)) {
      blocks.overwrite(old.block(), record);
      return new Entry(old.block(), record.length, header, slot);
    }
    MemoryBlock block = blocks.writeNew(record);
    if (old == null) {
      slots.assign(slot, id, block.handle());
    } else {
      slots.setHandle(slot, block.handle());
      blocks.free(old.block());
    }
    return new Entry(block, record.length, header, slot);
  }

  private static long totalBytes(byte[][] records) {
    long total = 0;
    for (byte[] record : records) {
      total += record.length;
    }
    return total;
  }

  private String fullMessage(int records, long bytes) {
    return "kv pool " + poolFile + " is full: no room for " + records + " record(s) of " + bytes
        + " bytes (capacity " + heap.size() + " bytes, about " + (usedBytes.get() + slots.bytes())
        + " in use); nothing was written";
  }

  private void load() {
    record Unfinished(UUID id, long slot, MemoryBlock block) {}
    List<Unfinished> unfinished = new ArrayList<>();
    try {
      slots.scan((slot, id, handle) -> {
        MemoryBlock block = heap.memoryBlockFromHandle(handle);
        if (blocks.erasing(block)) {
          unfinished.add(new Unfinished(id, slot, block)); // removed before a crash: erased below
          return;
        }
        int length = blocks.storedLength(block, id);
        ObjectHeader header = codec.decodeHeader(blocks.input(block, length), id);
        if (!index.load(id, new Entry(block, length, header, slot))) {
          throw new InternalException("pool " + poolFile + " lists object " + id + " twice");
        }
        usedBytes.addAndGet(block.size());
      });
    } catch (DataClayException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new InternalException("pool " + poolFile + " is damaged: " + e);
    }
    for (Unfinished u : unfinished) {
      usedBytes.addAndGet(u.block().size());
      finishErasure(u.id(), u.slot(), u.block());
    }
  }
}
