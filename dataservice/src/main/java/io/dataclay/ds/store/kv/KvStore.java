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
import io.dataclay.ds.store.crypt.ValueSealer;
import io.dataclay.ds.store.engine.CloseGuard;
import io.dataclay.ds.store.engine.KeyLocks;
import io.dataclay.ds.store.engine.PoolDirectory;
import io.dataclay.ds.store.engine.RecordCodec;
import io.dataclay.ds.store.engine.RecordEdit;
import io.dataclay.ds.store.engine.RecordInput;
import io.dataclay.ds.store.pmem.PmemHeap;
import io.dataclay.ds.store.pmem.SlotDirectory;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.StampedLock;
import java.util.function.Consumer;
import java.util.function.Function;
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
 * <p>With a store key, each field value is sealed ({@link ValueSealer}) before it is encoded and
 * opened after it is decoded; headers, names and references stay readable. A removed object's
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

  private final PoolDirectory directory;
  private final Path poolFile;
  private final Heap heap;
  private final SlotDirectory slots;
  private final RecordBlocks blocks;
  private final ValueSealer sealer;
  private final RecordCodec codec = new RecordCodec();
  private final ConcurrentHashMap<UUID, Entry> index = new ConcurrentHashMap<>();
  private final KeyLocks locks = new KeyLocks(1024);
  private final CloseGuard guard;
  private final AtomicLong usedBytes = new AtomicLong();

  private KvStore(PoolDirectory directory, Path poolFile, Heap heap, SlotDirectory slots) {
    this.directory = directory;
    this.poolFile = poolFile;
    this.heap = heap;
    this.slots = slots;
    this.blocks = new RecordBlocks(heap);
    this.sealer = directory.sealer();
    this.guard = new CloseGuard("kv store " + directory.path());
  }

  /**
   * Opens the pool in {@code config.path()}, creating directory and pool ({@code sizeBytes}) when
   * missing; an existing pool keeps the size it was made with.
   *
   * @throws InvalidArgumentException when the directory or pool file cannot be used as a kv pool
   */
  public static KvStore open(StoreConfig config) {
    return openFor(ENGINE, config);
  }

  /**
   * Opens a kv pool on behalf of {@code owner}, an engine built on this one (2lm): the directory's
   * engine marker names the owner, so neither engine opens the other's pool by mistake.
   *
   * @throws InvalidArgumentException when the directory or pool file cannot be used as such a pool
   */
  public static KvStore openFor(String owner, StoreConfig config) {
    StoreKey key = StoreKey.forStore(config);
    PoolDirectory directory = PoolDirectory.claim(config.path(), owner, key);
    Heap heap = null;
    try {
      Path file = directory.resolve(POOL_FILE);
      heap = Files.exists(file)
          ? PmemHeap.open(file)
          : PmemHeap.create(file, config.sizeBytes(), h -> SlotDirectory.create(h, DIRECTORY_MAGIC));
      KvStore store = new KvStore(directory, file, heap, SlotDirectory.open(heap, DIRECTORY_MAGIC, file.toString(), ENGINE));
      store.load();
      return store;
    } catch (RuntimeException e) {
      if (heap != null) {
        PmemHeap.close(heap);
      }
      directory.close();
      throw e;
    }
  }

  @Override
  public void putAll(List<StoredObject> objects) {
    List<UUID> ids = RecordCodec.batchIds(objects);
    int n = ids.size();
    byte[][] records = new byte[n][];
    ObjectHeader[] headers = new ObjectHeader[n];
    for (int i = 0; i < n; i++) {
      records[i] = codec.encode(sealer.seal(objects.get(i)));
      headers[i] = codec.canonical(objects.get(i).header());
    }
    guard.enter();
    try (KeyLocks.Held held = locks.writeLockAll(ids)) {
      Entry[] old = new Entry[n];
      long[] slotOf = new long[n];
      boolean[] taken = new boolean[n];
      Entry[] written;
      try {
        for (int i = 0; i < n; i++) {
          old[i] = index.get(ids.get(i));
          if (old[i] != null) {
            slotOf[i] = old[i].slot();
          } else {
            slotOf[i] = slots.take();
            taken[i] = true;
          }
        }
        written = PmemHeap.transaction(heap, () -> {
          Entry[] entries = new Entry[n];
          for (int i = 0; i < n; i++) {
            entries[i] = store(ids.get(i), records[i], headers[i], old[i], slotOf[i]);
          }
          return entries;
        }, () -> fullMessage(n, totalBytes(records)));
      } catch (RuntimeException e) {
        // The transaction rolled back (or never ran): the slots taken for new objects are empty.
        for (int i = 0; i < n; i++) {
          if (taken[i]) {
            slots.release(slotOf[i]);
          }
        }
        throw e;
      }
      for (int i = 0; i < n; i++) {
        index.put(ids.get(i), written[i]);
        usedBytes.addAndGet(written[i].block().size() - (old[i] == null ? 0 : old[i].block().size()));
      }
    } finally {
      guard.exit();
    }
  }

  @Override
  public Optional<StoredObject> get(UUID id) {
    if (id == null) {
      throw new InvalidArgumentException("object ID is missing");
    }
    guard.enter();
    try {
      StampedLock lock = locks.of(id);
      // Fast path, no lock write: a writer changes or frees a block only under the write lock, so
      // if the stamp still validates after the copy, the bytes copied were a committed record.
      long stamp = lock.tryOptimisticRead();
      if (stamp != 0) {
        Entry entry = index.get(id);
        if (entry == null) {
          if (lock.validate(stamp)) {
            return Optional.empty();
          }
        } else if (entry.length() <= BULK_READ_MAX) {
          byte[] record = readOptimistically(entry);
          if (record != null && lock.validate(stamp)) {
            return Optional.of(sealer.open(codec.decode(id, RecordInput.of(record), entry.header())));
          }
        }
      }
      // Large records are decoded straight from pmem, each value copied once into its array.
      return readLocked(id, entry -> codec.decode(id, blocks.input(entry.block(), entry.length()), entry.header()))
          .map(sealer::open);
    } finally {
      guard.exit();
    }
  }

  @Override
  public Optional<Set<UUID>> references(UUID id) {
    if (id == null) {
      throw new InvalidArgumentException("object ID is missing");
    }
    guard.enter();
    try {
      return readLocked(id, entry -> codec.references(id, blocks.input(entry.block(), entry.length())));
    } finally {
      guard.exit();
    }
  }

  // read applied to the object's entry under its read lock, so that its block, read in place, does
  // not change meanwhile; empty when the object is not stored.
  private <T> Optional<T> readLocked(UUID id, Function<Entry, T> read) {
    StampedLock lock = locks.of(id);
    long stamp = lock.readLock();
    try {
      Entry entry = index.get(id);
      return entry == null ? Optional.empty() : Optional.of(read.apply(entry));
    } finally {
      lock.unlockRead(stamp);
    }
  }

  @Override
  public Optional<ObjectHeader> header(UUID id) {
    if (id == null) {
      throw new InvalidArgumentException("object ID is missing");
    }
    guard.checkOpen();
    Entry entry = index.get(id);
    return entry == null ? Optional.empty() : Optional.of(entry.header());
  }

  /** Bytes of the stored record of {@code id}, or -1 when it is not stored; a DRAM lookup. */
  public int recordLength(UUID id) {
    if (id == null) {
      throw new InvalidArgumentException("object ID is missing");
    }
    guard.checkOpen();
    Entry entry = index.get(id);
    return entry == null ? -1 : entry.length();
  }

  @Override
  public void applyDelta(ObjectDelta plain) {
    RecordCodec.check(plain);
    ObjectDelta delta = sealer.seal(plain);
    UUID id = delta.id();
    guard.enter();
    try {
      StampedLock lock = locks.of(id);
      long stamp = lock.writeLock();
      try {
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
      } finally {
        lock.unlockWrite(stamp);
      }
    } finally {
      guard.exit();
    }
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
    if (id == null) {
      throw new InvalidArgumentException("object ID is missing");
    }
    guard.enter();
    try {
      StampedLock lock = locks.of(id);
      long stamp = lock.writeLock();
      try {
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
      } finally {
        lock.unlockWrite(stamp);
      }
    } finally {
      guard.exit();
    }
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
    guard.checkOpen();
    return index.size();
  }

  @Override
  public void forEachId(Consumer<UUID> action) {
    if (action == null) {
      throw new InvalidArgumentException("action is missing");
    }
    guard.checkOpen();
    index.keySet().forEach(action);
  }

  @Override
  public StoreStats stats() {
    guard.checkOpen();
    return new StoreStats(ENGINE, DURABILITY, directory.path().toString(), heap.size(),
        usedBytes.get() + slots.bytes(), index.size(), sealer.encrypts());
  }

  @Override
  public void close() {
    if (guard.close()) {
      try {
        PmemHeap.close(heap);
      } finally {
        directory.close();
      }
    }
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

  private byte[] readOptimistically(Entry entry) {
    try {
      return blocks.read(entry.block(), entry.length());
    } catch (RuntimeException e) {
      return null; // a racing writer changed the block; the caller retries under the read lock
    }
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
        if (index.putIfAbsent(id, new Entry(block, length, header, slot)) != null) {
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
