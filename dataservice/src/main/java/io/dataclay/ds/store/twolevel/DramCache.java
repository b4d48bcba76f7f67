package io.dataclay.ds.store.twolevel;

import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.ds.store.engine.KeyLocks;
import io.dataclay.exceptions.StoreFullException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.StampedLock;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The 2lm engine's DRAM level: a cell per stored object (see {@link Cell}), records cached up to
 * a byte budget, CLOCK eviction with write-back of dirty records to the NVRAM level, and the
 * checkpoint that writes every dirty record back.
 *
 * <p>Two locks per object. A cell changes only under the object's write lock ({@link #locks}),
 * held briefly. The NVRAM copy of an object is written only under its NVRAM lock
 * ({@link #nvramLocks}), so two writes of one object to NVRAM never race and NVRAM never goes
 * back to an older state. Whoever needs both takes the NVRAM lock first. A write-back does not
 * hold the object lock while it writes: cached records are immutable and a cell is swapped whole,
 * so it writes the record of the cell it saw, and marks that cell clean (or evicts it) only if it
 * is still the object's cell; readers and writers in DRAM are never held up by NVRAM.
 */
final class DramCache {
  /** Objects written back per NVRAM transaction at a checkpoint. */
  private static final int CHECKPOINT_BATCH_OBJECTS = 256;
  /** Bytes written back per NVRAM transaction at a checkpoint (the undo log stays small). */
  private static final long CHECKPOINT_BATCH_BYTES = 16L << 20;
  /** Records the CLOCK hand passes over per step of an eviction (their dirty ones share a transaction). */
  private static final int EVICTION_BATCH = 32;

  final ConcurrentHashMap<UUID, Cell> cells = new ConcurrentHashMap<>();
  final KeyLocks locks = new KeyLocks(1024);
  /** Held while an object is written to NVRAM; taken before {@link #locks}, never while holding it. */
  final KeyLocks nvramLocks = new KeyLocks(1024);

  private final ObjectStore nvram;
  private final long capacity;
  private final Set<UUID> dirty = ConcurrentHashMap.newKeySet();
  private final ConcurrentLinkedQueue<UUID> clock = new ConcurrentLinkedQueue<>();
  private final AtomicLong cachedBytes = new AtomicLong();
  private final AtomicLong cachedRecords = new AtomicLong();
  /** Entries in {@link #clock}; more than the cached records when some left without the hand passing. */
  private final AtomicLong clockEntries = new AtomicLong();
  private final AtomicBoolean sweeping = new AtomicBoolean();
  private final AtomicLong dirtyBytes = new AtomicLong();

  DramCache(ObjectStore nvram, long capacity) {
    this.nvram = nvram;
    this.capacity = capacity;
  }

  /** Whether a record of {@code bytes} is cached at all (larger ones are written through). */
  boolean cacheable(long bytes) {
    return bytes <= capacity / 4;
  }

  /** Bytes of cached records. */
  long cachedBytes() {
    return cachedBytes.get();
  }

  /** Bytes of cached records not yet written back. */
  long dirtyBytes() {
    return dirtyBytes.get();
  }

  /** Number of records not yet written back. */
  int dirtyCount() {
    return dirty.size();
  }

  /** Registers an object found in NVRAM at open. */
  void known(UUID id, ObjectHeader header) {
    cells.put(id, Cell.inNvram(header));
  }

  /**
   * Makes room for {@code bytes} more by evicting records, writing dirty ones back. Call holding
   * no object lock (eviction takes them).
   *
   * @throws StoreFullException when a dirty record cannot be written back for want of NVRAM room;
   *     nothing is changed then but what was already written back
   */
  void makeRoom(long bytes) {
    long steps = 0;
    while (cachedBytes.get() + bytes > capacity) {
      // Dirty records a checkpoint is writing back are passed over, unless the hand went all round.
      int moved = evictSome(bytes, steps > clockEntries.get());
      if (moved == 0) {
        return; // nothing cached
      }
      steps += moved;
    }
  }

  /** As {@link #makeRoom}, but gives up quietly when NVRAM is full; returns whether there is room. */
  boolean tryMakeRoom(long bytes) {
    try {
      makeRoom(bytes);
      return cachedBytes.get() + bytes <= capacity;
    } catch (StoreFullException e) {
      return false;
    }
  }

  /** Swaps in the cell of {@code id}; the caller holds its write lock. */
  void set(UUID id, Cell old, Cell now) {
    cells.put(id, now);
    account(id, old, now);
    if (now.cached != null && (old == null || old.cached == null)) {
      enqueue(id);
    }
  }

  /** Drops the cell of {@code id}; the caller holds its write lock. */
  void drop(UUID id, Cell old) {
    cells.remove(id);
    account(id, old, null);
  }

  /**
   * Writes every record that is dirty when this is called back to NVRAM, in transactions of at
   * most {@value #CHECKPOINT_BATCH_OBJECTS} objects: each object lands whole (old or new) even if
   * the process dies part-way. Records written again meanwhile are written in their newest state.
   *
   * @throws StoreFullException when NVRAM has no room; what was written stays written
   */
  void writeBackAll() {
    List<UUID> batch = new ArrayList<>();
    long batchBytes = 0;
    for (UUID id : dirty) {
      Cell cell = cells.get(id);
      batch.add(id);
      batchBytes += cell == null ? 0 : cell.bytes;
      if (batch.size() >= CHECKPOINT_BATCH_OBJECTS || batchBytes >= CHECKPOINT_BATCH_BYTES) {
        writeBack(batch);
        batch.clear();
        batchBytes = 0;
      }
    }
    if (!batch.isEmpty()) {
      writeBack(batch);
    }
  }

  private void writeBack(List<UUID> ids) {
    try (KeyLocks.Held held = nvramLocks.writeLockAll(ids)) {
      List<Cell> seen = new ArrayList<>(ids.size());
      List<UUID> written = new ArrayList<>(ids.size());
      List<StoredObject> records = new ArrayList<>(ids.size());
      for (UUID id : ids) {
        Cell cell = cells.get(id);
        if (cell != null && cell.dirty) {
          seen.add(cell);
          written.add(id);
          records.add(cell.cached);
        }
      }
      if (records.isEmpty()) {
        return;
      }
      nvram.putAll(records); // one transaction, durable when it returns; DRAM writers go on meanwhile
      // A cell written again meanwhile stays dirty, in its newer state.
      afterWriteBack(written, seen, Cell::cleaned, id -> { });
    }
  }

  /**
   * After the records of {@code written} cells went to NVRAM: each object whose cell is still the
   * one written gets {@code next} of it; {@code changedMeanwhile} is told of each other object
   * still cached (written again while its old record was written back).
   */
  private void afterWriteBack(List<UUID> ids, List<Cell> written, UnaryOperator<Cell> next,
      Consumer<UUID> changedMeanwhile) {
    for (int i = 0; i < ids.size(); i++) {
      UUID id = ids.get(i);
      Cell cell = written.get(i);
      StampedLock lock = locks.of(id);
      long stamp = lock.writeLock();
      try {
        Cell now = cells.get(id);
        if (now == cell) {
          set(id, cell, next.apply(cell));
        } else if (now != null && now.cached != null) {
          changedMeanwhile.accept(id);
        }
      } finally {
        lock.unlockWrite(stamp);
      }
    }
  }

  /**
   * Moves the CLOCK hand over up to {@value #EVICTION_BATCH} records, until {@code bytes} more
   * would fit: clears reference bits, evicts clean records, and writes the dirty ones it meets
   * back in one NVRAM transaction before evicting them. Returns the entries the hand passed (0:
   * nothing is cached).
   */
  private int evictSome(long bytes, boolean mayWait) {
    List<UUID> dirtyIds = new ArrayList<>();
    List<Cell> dirtySeen = new ArrayList<>();
    long pending = 0;
    int passed = 0;
    while (passed < EVICTION_BATCH && cachedBytes.get() - pending + bytes > capacity) {
      UUID id = clock.poll();
      if (id == null) {
        break;
      }
      passed++;
      clockEntries.decrementAndGet();
      StampedLock lock = locks.of(id);
      long stamp = lock.writeLock();
      try {
        Cell cell = cells.get(id);
        if (cell == null || cell.cached == null) {
          continue; // the record left already (removed, written through or evicted)
        }
        if (cell.referenced) {
          cell.referenced = false;
          enqueue(id);
        } else if (!cell.dirty) {
          set(id, cell, cell.evicted()); // NVRAM holds this very state
        } else {
          dirtyIds.add(id);
          dirtySeen.add(cell);
          pending += cell.bytes;
        }
      } finally {
        lock.unlockWrite(stamp);
      }
    }
    if (!dirtyIds.isEmpty()) {
      writeBackAndEvict(dirtyIds, dirtySeen, mayWait);
    }
    return passed;
  }

  // Writes dirty records to NVRAM holding only their NVRAM locks, then evicts those nobody changed
  // meanwhile. Records whose NVRAM lock is taken (a checkpoint writing them) wait for the hand's
  // next pass, unless mayWait.
  private void writeBackAndEvict(List<UUID> ids, List<Cell> seen, boolean mayWait) {
    try (KeyLocks.Held held = mayWait ? nvramLocks.writeLockAll(ids) : nvramLocks.tryWriteLockAll(ids)) {
      List<UUID> written = new ArrayList<>(ids.size());
      List<Cell> writtenCells = new ArrayList<>(ids.size());
      List<StoredObject> records = new ArrayList<>(ids.size());
      for (int i = 0; i < ids.size(); i++) {
        UUID id = ids.get(i);
        Cell cell = cells.get(id);
        if (!held.covers(id) || cell != seen.get(i)) {
          if (cell != null && cell.cached != null) {
            enqueue(id); // being written back, changed or cleaned meanwhile: the hand comes back to it
          }
          continue;
        }
        written.add(id);
        writtenCells.add(cell);
        records.add(cell.cached);
      }
      if (records.isEmpty()) {
        return;
      }
      try {
        nvram.putAll(records); // one transaction, durable when it returns
      } catch (RuntimeException e) {
        written.forEach(this::enqueue);
        throw e;
      }
      // A record written again meanwhile stays cached, dirty; the hand comes back to it.
      afterWriteBack(written, writtenCells, Cell::evicted, this::enqueue);
    }
  }

  private void enqueue(UUID id) {
    clock.add(id);
    long entries = clockEntries.incrementAndGet();
    // Records removed or written through leave their entry behind until the hand passes, which
    // it never does while the cache has room; sweep them out before they pile up.
    if (entries > 2 * cachedRecords.get() + 4096 && sweeping.compareAndSet(false, true)) {
      try {
        clock.removeIf(queued -> {
          Cell cell = cells.get(queued);
          boolean stale = cell == null || cell.cached == null;
          if (stale) {
            clockEntries.decrementAndGet();
          }
          return stale;
        });
      } finally {
        sweeping.set(false);
      }
    }
  }

  private void account(UUID id, Cell old, Cell now) {
    cachedBytes.addAndGet((now == null ? 0 : now.bytes) - (old == null ? 0 : old.bytes));
    cachedRecords.addAndGet((now != null && now.cached != null ? 1 : 0) - (old != null && old.cached != null ? 1 : 0));
    long wasDirty = old != null && old.dirty ? old.bytes : 0;
    long isDirty = now != null && now.dirty ? now.bytes : 0;
    dirtyBytes.addAndGet(isDirty - wasDirty);
    if (isDirty > 0) {
      dirty.add(id);
    } else if (wasDirty > 0) {
      dirty.remove(id);
    }
  }
}
