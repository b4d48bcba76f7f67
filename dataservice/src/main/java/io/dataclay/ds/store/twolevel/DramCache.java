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

/**
 * The 2lm engine's DRAM level: a cell per stored object (see {@link Cell}), records cached up to
 * a byte budget, CLOCK eviction with write-back of dirty records to the NVRAM level, and the
 * checkpoint that writes every dirty record back. A cell changes only under its object's write
 * lock ({@link #locks}); the NVRAM copy of an object is written only under that lock too, so two
 * write-backs of one object never race and NVRAM never goes back to an older state.
 */
final class DramCache {
  /** Objects written back per NVRAM transaction at a checkpoint. */
  private static final int CHECKPOINT_BATCH_OBJECTS = 256;
  /** Bytes written back per NVRAM transaction at a checkpoint (the undo log stays small). */
  private static final long CHECKPOINT_BATCH_BYTES = 16L << 20;

  final ConcurrentHashMap<UUID, Cell> cells = new ConcurrentHashMap<>();
  final KeyLocks locks = new KeyLocks(1024);

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
    while (cachedBytes.get() + bytes > capacity && evictOne()) {
      Thread.onSpinWait();
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
    try (KeyLocks.Held held = locks.writeLockAll(ids)) {
      List<UUID> written = new ArrayList<>(ids.size());
      List<StoredObject> records = new ArrayList<>(ids.size());
      for (UUID id : ids) {
        Cell cell = cells.get(id);
        if (cell != null && cell.dirty) {
          written.add(id);
          records.add(cell.cached);
        }
      }
      nvram.putAll(records); // one transaction: durable when it returns
      for (UUID id : written) {
        Cell cell = cells.get(id);
        set(id, cell, cell.cleaned());
      }
    }
  }

  /** Moves the CLOCK hand one step: evicts one record or clears one reference bit. False when nothing is cached. */
  private boolean evictOne() {
    UUID id = clock.poll();
    if (id == null) {
      return false;
    }
    clockEntries.decrementAndGet();
    StampedLock lock = locks.of(id);
    long stamp = lock.writeLock();
    try {
      Cell cell = cells.get(id);
      if (cell == null || cell.cached == null) {
        return true; // the record left already (removed, written through or evicted)
      }
      if (cell.referenced) {
        cell.referenced = false;
        enqueue(id);
        return true;
      }
      if (cell.dirty) {
        try {
          nvram.put(cell.cached); // durable when it returns; the lock keeps writers of it out
        } catch (RuntimeException e) {
          enqueue(id);
          throw e;
        }
      }
      set(id, cell, cell.evicted());
      return true;
    } finally {
      lock.unlockWrite(stamp);
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
