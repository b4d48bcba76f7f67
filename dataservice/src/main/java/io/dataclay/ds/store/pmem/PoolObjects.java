package io.dataclay.ds.store.pmem;

import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoreStats;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.ds.store.engine.KeyLocks;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * What a pmem engine knows about the objects in its pool, kept the same way by kv and heap: the
 * DRAM {@link SlotIndex} of their entries, the per-object locks ({@link KeyLocks}), the pool bytes
 * they take, the batch write that reserves slots and records what its transaction wrote, the
 * removal that erases an object's bytes, the scan that rebuilds the index at open, and the
 * statistics and messages naming the pool. The engine keeps what differs: how an entry lies in the
 * pool (its {@link PoolStore.Layout}) and how its bytes are erased ({@link Erasure}).
 *
 * @param <E> the engine's entry
 */
public final class PoolObjects<E> {
  private static final Logger LOG = Logger.getLogger(PoolObjects.class.getName());

  private final PmemPool pool;
  private final SlotIndex<E> index;
  private final ToLongFunction<E> slotOf;
  private final ToLongFunction<E> poolBytes;
  private final Function<E, ObjectHeader> headerOf;
  private final Erasure<E> erasure;
  private final KeyLocks locks = new KeyLocks(1024);
  private final AtomicLong usedBytes = new AtomicLong();

  /**
   * No objects yet in {@code pool} (see {@link #load}); {@code slotOf}, {@code poolBytes} and
   * {@code headerOf} give an entry's slot, the pool bytes it takes, and its cached header;
   * {@code erasure} erases a removed entry's bytes.
   */
  public PoolObjects(PmemPool pool, ToLongFunction<E> slotOf, ToLongFunction<E> poolBytes,
      Function<E, ObjectHeader> headerOf, Erasure<E> erasure) {
    this.pool = pool;
    this.index = new SlotIndex<>(pool.slots(), slotOf);
    this.slotOf = slotOf;
    this.poolBytes = poolBytes;
    this.headerOf = headerOf;
    this.erasure = erasure;
  }

  /**
   * How an engine erases an entry's bytes from the pool, in the steps {@link #remove} takes.
   *
   * @param mark marks the entry's object block as being erased; runs inside a transaction
   * @param zero overwrites the entry's bytes with zeros, outside any transaction (whose undo log may not fit)
   * @param free frees the entry's blocks; runs inside the transaction that empties its slot
   */
  public record Erasure<E>(Consumer<E> mark, Consumer<E> zero, Consumer<E> free) {}

  /** Reads the object listed in {@code slot} at open, and answers its entry. */
  public interface Reader<E> {
    /** The entry of {@code id}, whose object block is at {@code handle}. */
    E read(long slot, UUID id, long handle);
  }

  /**
   * Rebuilds the index from the slot directory at open, reading each object with {@code read};
   * the entries {@code erasing} says a crash left half removed are not indexed, and their erasure
   * is finished here (in slot order).
   *
   * @throws InternalException when the pool is damaged or lists an object twice
   */
  public void load(Reader<E> read, Predicate<E> erasing) {
    Map<UUID, E> unfinished = new LinkedHashMap<>();
    try {
      pool.slots().scan((slot, id, handle) -> {
        E entry = read.read(slot, id, handle);
        usedBytes.addAndGet(poolBytes.applyAsLong(entry));
        if (erasing.test(entry)) {
          unfinished.put(id, entry);
        } else if (!index.load(id, entry)) {
          throw new InternalException("pool " + pool.file() + " lists object " + id + " twice");
        }
      });
    } catch (DataClayException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new InternalException("pool " + pool.file() + " is damaged: " + e);
    }
    unfinished.forEach(this::finishErasure);
  }

  /**
   * Writes a batch of {@code objects} in one transaction under their write locks: reserves their
   * slots, runs {@code write} over them inside the transaction and records the entries it answers,
   * in the order of {@code objects}. When the transaction rolls back (or never runs: the pool is
   * full, and {@code whenFull} says so) the slots taken for new objects are given back and nothing
   * is recorded.
   */
  public void writeAll(List<StoredObject> objects, Function<SlotIndex<E>.Batch, E[]> write,
      Supplier<String> whenFull) {
    List<UUID> ids = objects.stream().map(StoredObject::id).toList();
    try (KeyLocks.Held held = locks.writeLockAll(ids)) {
      SlotIndex<E>.Batch batch = index.reserve(ids);
      E[] written;
      try {
        written = PmemHeap.transaction(pool.heap(), () -> write.apply(batch), whenFull);
      } catch (RuntimeException e) {
        batch.releaseTaken(); // the transaction rolled back (or never ran): those slots are empty
        throw e;
      }
      for (int i = 0; i < ids.size(); i++) {
        replace(ids.get(i), batch.old(i), written[i]);
      }
    }
  }

  /** Records {@code updated} as the entry of {@code id} once its change committed ({@code old}: the one before). */
  public void replace(UUID id, E old, E updated) {
    index.put(id, updated);
    usedBytes.addAndGet(poolBytes.applyAsLong(updated) - (old == null ? 0 : poolBytes.applyAsLong(old)));
  }

  /** The locks callers hold on the objects they read or change. */
  public KeyLocks locks() {
    return locks;
  }

  /** The entry of {@code id}, or null when it is not stored. */
  public E get(UUID id) {
    return index.get(id);
  }

  /**
   * The entry of {@code id}, which must be stored.
   *
   * @throws ObjectDoesNotExistException when it is not
   */
  public E stored(UUID id) {
    E entry = index.get(id);
    if (entry == null) {
      throw new ObjectDoesNotExistException("object " + id + " is not stored in " + pool.directory().path());
    }
    return entry;
  }

  /** The cached header of {@code id}; a DRAM lookup. */
  public Optional<ObjectHeader> header(UUID id) {
    E entry = index.get(id);
    return entry == null ? Optional.empty() : Optional.of(headerOf.apply(entry));
  }

  /**
   * Removes {@code id} under its write lock, then overwrites its bytes with zeros and frees its
   * blocks: one transaction marks the object block as being erased, so the removal is durable when
   * this returns; the zeros are written outside it; a second transaction frees the blocks and
   * empties the slot. A crash in between leaves a marked block that the next open finishes erasing
   * ({@link #load}); the object never comes back half-zeroed. False when {@code id} was not stored.
   */
  public boolean remove(UUID id) {
    return locks.writing(id, () -> {
      E old = index.get(id);
      if (old == null) {
        return false;
      }
      mark(old);
      index.remove(id);
      finishErasure(id, old);
      return true;
    });
  }

  /**
   * The first half of {@link #remove} alone (the object forgotten, its block marked, nothing
   * zeroed or freed), as a crash right after it leaves the pool; for tests of {@link #load}.
   */
  public void removeWithoutErasing(UUID id) {
    locks.writing(id, () -> mark(index.remove(id)));
  }

  private void mark(E old) {
    PmemHeap.transaction(pool.heap(), () -> {
      erasure.mark().accept(old);
      return null;
    }, this::noRoomToRemove);
  }

  /**
   * Zeroes the bytes of {@code old}, whose removal committed, then frees its blocks and empties its
   * slot. If that fails, the object block stays marked and its slot taken until the next open
   * finishes the erasure.
   */
  private void finishErasure(UUID id, E old) {
    try {
      erasure.zero().accept(old);
      PmemHeap.transaction(pool.heap(), () -> {
        pool.slots().setHandle(slotOf.applyAsLong(old), 0);
        erasure.free().accept(old);
        return null;
      }, this::noRoomToRemove);
      pool.slots().release(slotOf.applyAsLong(old));
      usedBytes.addAndGet(-poolBytes.applyAsLong(old));
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "object " + id + " was removed from " + pool.file()
          + " but its blocks were not yet zeroed and freed; the next open does it: " + e.getMessage());
    }
  }

  /** Number of stored objects. */
  public long count() {
    return index.size();
  }

  /** Calls {@code action} for every stored object's ID. */
  public void forEachId(Consumer<UUID> action) {
    index.forEachId(action);
  }

  /** The store's statistics, for {@code engine} promising {@code durability}. */
  public StoreStats stats(String engine, String durability) {
    return new StoreStats(engine, durability, pool.directory().path().toString(), pool.heap().size(), inUse(),
        index.size(), pool.directory().encrypted());
  }

  /** Closes the pool; no call may be inside it any more. */
  public void close() {
    pool.close();
  }

  /** The end of a "pool is full" message: capacity and use, and that nothing was written. */
  public String fullness() {
    return "(capacity " + pool.heap().size() + " bytes, about " + inUse() + " in use); nothing was written";
  }

  private String noRoomToRemove() {
    return "pool " + pool.file() + " has no room left even for the log of a removal";
  }

  private long inUse() {
    return usedBytes.get() + pool.slots().bytes();
  }
}
