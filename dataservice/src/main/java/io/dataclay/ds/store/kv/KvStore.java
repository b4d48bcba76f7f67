package io.dataclay.ds.store.kv;

import com.intel.pmem.llpl.Heap;
import com.intel.pmem.llpl.MemoryBlock;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.ds.store.crypt.StoreKey;
import io.dataclay.ds.store.engine.OptimisticRead;
import io.dataclay.ds.store.engine.PoolDirectory;
import io.dataclay.ds.store.engine.RecordCodec;
import io.dataclay.ds.store.engine.RecordEdit;
import io.dataclay.ds.store.engine.RecordInput;
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
 * block is overwritten with zeros before it is freed (see {@link PoolObjects#remove}).
 */
public final class KvStore implements PoolStore.Layout {
  /** Engine name in configuration. */
  public static final String ENGINE = "kv";
  /** Pool file inside the pool directory. */
  public static final String POOL_FILE = "kv.pool";

  private static final int BULK_READ_MAX = 64 * 1024;
  private static final long DIRECTORY_MAGIC = 0x4443_4B56_4449_5231L; // "DCKVDIR1"

  /** Where an object's record is: its block, its length, its cached header, its directory slot. */
  private record Entry(MemoryBlock block, int length, ObjectHeader header, long slot) {}

  private final PmemPool pool;
  private final RecordBlocks blocks;
  private final RecordCodec codec = new RecordCodec();
  private final PoolObjects<Entry> index;

  /** Loads the objects listed in {@code pool}. */
  private KvStore(PmemPool pool) {
    this.pool = pool;
    this.blocks = new RecordBlocks(pool.heap());
    this.index = new PoolObjects<>(pool, Entry::slot, entry -> entry.block().size(), Entry::header,
        new PoolObjects.Erasure<>(entry -> blocks.markErasing(entry.block()), entry -> blocks.zero(entry.block()),
            entry -> blocks.free(entry.block())));
    load();
  }

  /**
   * Opens the pool in {@code config.path()}, creating directory and pool ({@code sizeBytes}) when
   * missing; an existing pool keeps the size it was made with.
   *
   * @throws InvalidArgumentException when the directory or pool file cannot be used as a kv pool
   */
  public static PoolStore<KvStore> open(StoreConfig config, StoreKey key) {
    return openFor(ENGINE, config, key);
  }

  /**
   * Opens a kv pool on behalf of {@code owner}, an engine built on this one (2lm): the directory's
   * engine marker names the owner, so neither engine opens the other's pool by mistake.
   *
   * @throws InvalidArgumentException when the directory or pool file cannot be used as such a pool
   */
  public static PoolStore<KvStore> openFor(String owner, StoreConfig config, StoreKey key) {
    KvStore layout = PmemPool.open(config, owner, key, POOL_FILE, DIRECTORY_MAGIC, ENGINE, KvStore::new);
    return new PoolStore<>(ENGINE, layout.index, layout);
  }

  @Override
  public void putAll(List<StoredObject> objects) {
    int n = objects.size();
    byte[][] records = new byte[n][];
    ObjectHeader[] headers = new ObjectHeader[n];
    for (int i = 0; i < n; i++) {
      records[i] = codec.encode(objects.get(i));
      headers[i] = codec.canonical(objects.get(i).header());
    }
    index.writeAll(objects, batch -> {
      Entry[] entries = new Entry[n];
      for (int i = 0; i < n; i++) {
        entries[i] = store(objects.get(i).id(), records[i], headers[i], batch.old(i), batch.slot(i));
      }
      return entries;
    }, () -> fullMessage(n, totalBytes(records)));
  }

  @Override
  public Optional<StoredObject> get(UUID id) {
    // Records up to BULK_READ_MAX are copied with one bulk read and no lock write; larger ones are
    // decoded straight from pmem under the read lock, each value copied once into its array.
    return OptimisticRead.read(index.locks().of(id), () -> index.get(id),
        entry -> entry.length() <= BULK_READ_MAX ? blocks.read(entry.block(), entry.length()) : null,
        (entry, record) -> codec.decode(id, RecordInput.of(record), entry.header()),
        entry -> codec.decode(id, blocks.input(entry.block(), entry.length()), entry.header()));
  }

  @Override
  public Optional<Set<UUID>> references(UUID id) {
    // Under the read lock: the block, read in place, does not change meanwhile.
    return OptimisticRead.locked(index.locks().of(id), () -> index.get(id),
        entry -> codec.references(id, blocks.input(entry.block(), entry.length())));
  }

  /** Bytes of the stored record of {@code id}, or -1 when it is not stored; a DRAM lookup. */
  public int recordLength(UUID id) {
    Entry entry = index.get(id);
    return entry == null ? -1 : entry.length();
  }

  @Override
  public void applyDelta(ObjectDelta delta) {
    UUID id = delta.id();
    index.locks().writing(id, () -> {
      Entry old = index.stored(id);
      RecordInput current = blocks.input(old.block(), old.length());
      RecordEdit edit = RecordEdit.plan(current, delta);
      Entry updated;
      if (edit.inPlace()) {
        PmemHeap.transaction(pool.heap(), () -> {
          blocks.patch(old.block(), edit);
          return null;
        }, () -> fullMessage(1, edit.length()));
        updated = old;
      } else if (blocks.fitsInPlace(old.block(), edit.length())) {
        byte[] record = edit.toArray(current);
        PmemHeap.transaction(pool.heap(), () -> {
          blocks.overwrite(old.block(), record);
          return null;
        }, () -> fullMessage(1, record.length));
        updated = new Entry(old.block(), record.length, old.header(), old.slot());
      } else {
        MemoryBlock block = PmemHeap.transaction(pool.heap(), () -> {
          MemoryBlock written = blocks.writeEdited(old.block(), edit);
          pool.slots().setHandle(old.slot(), written.handle());
          blocks.free(old.block());
          return written;
        }, () -> fullMessage(1, edit.length()));
        updated = new Entry(block, edit.length(), old.header(), old.slot());
      }
      index.replace(id, old, updated);
    });
  }

  /** Stores one object's record and returns its new entry; runs inside the caller's transaction. */
  private Entry store(UUID id, byte[] record, ObjectHeader header, Entry old, long slot) {
    if (old != null && blocks.fitsInPlace(old.block(), record.length)) {
      blocks.overwrite(old.block(), record);
      return new Entry(old.block(), record.length, header, slot);
    }
    MemoryBlock block = blocks.writeNew(record);
    if (old == null) {
      pool.slots().assign(slot, id, block.handle());
    } else {
      pool.slots().setHandle(slot, block.handle());
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
    return "kv pool " + pool.file() + " is full: no room for " + records + " record(s) of " + bytes + " bytes "
        + index.fullness();
  }

  private void load() {
    // a block marked as being erased was removed before a crash: it is left unread (no header) and
    // its erasure finished here
    index.load((slot, id, handle) -> {
      MemoryBlock block = pool.heap().memoryBlockFromHandle(handle);
      if (blocks.erasing(block)) {
        return new Entry(block, 0, null, slot);
      }
      int length = blocks.storedLength(block, id);
      return new Entry(block, length, codec.decodeHeader(blocks.input(block, length), id), slot);
    }, entry -> entry.header() == null);
  }
}
