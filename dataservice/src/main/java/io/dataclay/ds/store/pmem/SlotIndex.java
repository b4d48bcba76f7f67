package io.dataclay.ds.store.pmem;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.ToLongFunction;

/**
 * The DRAM index of a pmem engine: each stored object's entry (where its record lies, its cached
 * header, its slot in the persistent {@link SlotDirectory}), rebuilt from the directory at open so
 * that reads never search pmem. Callers hold the object's lock (see
 * {@link io.dataclay.ds.store.engine.KeyLocks}) when they change an entry.
 *
 * @param <E> the engine's entry
 */
public final class SlotIndex<E> {
  private final ConcurrentHashMap<UUID, E> entries = new ConcurrentHashMap<>();
  private final SlotDirectory slots;
  private final ToLongFunction<E> slotOf;

  /** An empty index over {@code slots}; {@code slotOf} gives an entry's slot. */
  public SlotIndex(SlotDirectory slots, ToLongFunction<E> slotOf) {
    this.slots = slots;
    this.slotOf = slotOf;
  }

  /**
   * The slots a batch of objects is written to, reserved before its transaction: a stored object
   * keeps its slot, a new one takes a free slot, which {@link #releaseTaken} gives back when the
   * transaction rolled back (or never ran).
   */
  public final class Batch {
    private final List<E> old;
    private final long[] slot;
    private final boolean[] taken;

    private Batch(int n) {
      old = new ArrayList<>(n);
      slot = new long[n];
      taken = new boolean[n];
    }

    /** The entry object {@code i} had before the batch, or null when it is new. */
    public E old(int i) {
      return old.get(i);
    }

    /** The slot object {@code i} is written to. */
    public long slot(int i) {
      return slot[i];
    }

    /** Frees the slots taken for new objects: the transaction that was to fill them rolled back. */
    public void releaseTaken() {
      for (int i = 0; i < taken.length; i++) {
        if (taken[i]) {
          slots.release(slot[i]);
          taken[i] = false;
        }
      }
    }
  }

  /** Reserves the slots of {@code ids} (whose write locks the caller holds). */
  public Batch reserve(List<UUID> ids) {
    Batch batch = new Batch(ids.size());
    try {
      for (int i = 0; i < ids.size(); i++) {
        E old = entries.get(ids.get(i));
        batch.old.add(old);
        if (old != null) {
          batch.slot[i] = slotOf.applyAsLong(old);
        } else {
          batch.slot[i] = slots.take();
          batch.taken[i] = true;
        }
      }
    } catch (RuntimeException e) {
      batch.releaseTaken();
      throw e;
    }
    return batch;
  }

  /** The entry of {@code id}, or null when it is not stored. */
  public E get(UUID id) {
    return entries.get(id);
  }

  /** Records {@code id}'s new entry, once its transaction committed. */
  public void put(UUID id, E entry) {
    entries.put(id, entry);
  }

  /** Records an entry found at open; false when the directory listed {@code id} already. */
  public boolean load(UUID id, E entry) {
    return entries.putIfAbsent(id, entry) == null;
  }

  /** Forgets {@code id}, once its removal committed; returns its entry, or null. */
  public E remove(UUID id) {
    return entries.remove(id);
  }

  /** Number of stored objects. */
  public int size() {
    return entries.size();
  }

  /** Calls {@code action} for every stored object's ID. */
  public void forEachId(Consumer<UUID> action) {
    entries.keySet().forEach(action);
  }
}
