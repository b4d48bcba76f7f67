package io.dataclay.ds.store.pmem;

import com.intel.pmem.llpl.Heap;
import com.intel.pmem.llpl.MemoryBlock;
import io.dataclay.exceptions.InvalidArgumentException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/**
 * A persistent directory of slots, each mapping an object ID (16 bytes) to the handle of the
 * block holding its record (0 = free slot), reachable from the heap root. Slots live in segments
 * chained from the root block; the directory grows by appending a segment (doubling up to
 * {@value #MAX_SEGMENT_SLOTS} slots). The set of free slots is kept in DRAM and rebuilt by
 * {@link #scan}.
 *
 * <p>Crash safety: {@link #assign} and {@link #setHandle} log the bytes they change in the
 * caller's PMDK transaction, so a slot changes together with the record blocks the transaction
 * allocates and frees. Growth is a transaction of its own (allocate a zeroed segment, link it);
 * an empty segment left behind by a put that failed afterwards is harmless.
 *
 * <p>The root's magic number says which engine's records the slots point at, so that an engine
 * never reads a pool laid out by another.
 *
 * <pre>
 * root block:  long magic, long layout version, long first segment handle
 * segment:     long next segment handle, long slot count, then slots of
 *              long id most significant bits, long id least significant bits, long record handle
 * </pre>
 */
public final class SlotDirectory {
  private static final long LAYOUT_VERSION = 1;
  private static final long ROOT_BYTES = 24;
  private static final long FIRST_SEGMENT_OFFSET = 16;
  private static final long SEGMENT_HEADER_BYTES = 16;
  private static final long SLOT_BYTES = 24;
  private static final int FIRST_SEGMENT_SLOTS = 1024;
  private static final int MAX_SEGMENT_SLOTS = 65536;

  /** Receives each occupied slot found by {@link #scan}. */
  public interface OccupiedSlot {
    /** Called once per occupied slot. */
    void accept(long slot, UUID id, long handle);
  }

  private final Heap heap;
  private final MemoryBlock root;
  private volatile MemoryBlock[] segments = new MemoryBlock[0];
  private long[] free = new long[FIRST_SEGMENT_SLOTS];
  private int freeCount;

  private SlotDirectory(Heap heap, MemoryBlock root) {
    this.heap = heap;
    this.root = root;
  }

  /** Lays out an empty directory marked {@code magic} in a new heap and points the heap root at it. */
  public static void create(Heap heap, long magic) {
    PmemHeap.transaction(heap, () -> {
      MemoryBlock root = heap.allocateMemoryBlock(ROOT_BYTES, true);
      root.setLong(0, magic);
      root.setLong(8, LAYOUT_VERSION);
      root.flush(0, ROOT_BYTES);
      heap.setRoot(root.handle());
      return null;
    }, () -> "pool too small for an object directory");
  }

  /**
   * Opens the directory of a heap made by {@link #create} with {@code magic}; call {@link #scan}
   * before use.
   *
   * @param engine the engine whose directory {@code magic} marks, named in the error
   * @throws InvalidArgumentException when the heap root is not such a directory
   */
  public static SlotDirectory open(Heap heap, long magic, String poolName, String engine) {
    long handle = heap.getRoot();
    MemoryBlock root;
    try {
      root = handle == 0 ? null : heap.memoryBlockFromHandle(handle);
    } catch (RuntimeException e) {
      root = null;
    }
    if (root == null || root.size() < ROOT_BYTES || root.getLong(0) != magic) {
      throw new InvalidArgumentException("pool " + poolName + " is an llpl heap but holds no " + engine
          + " object directory; its content was not changed");
    }
    if (root.getLong(8) != LAYOUT_VERSION) {
      throw new InvalidArgumentException("pool " + poolName + " has directory layout " + root.getLong(8)
          + "; this build reads layout " + LAYOUT_VERSION);
    }
    return new SlotDirectory(heap, root);
  }

  /** Reports every occupied slot and rebuilds the free-slot set; call once, before any other use. */
  public synchronized void scan(OccupiedSlot visitor) {
    long next = root.getLong(FIRST_SEGMENT_OFFSET);
    List<MemoryBlock> found = new ArrayList<>();
    while (next != 0) {
      MemoryBlock segment = heap.memoryBlockFromHandle(next);
      int index = found.size();
      found.add(segment);
      int slots = (int) segment.getLong(8);
      for (int i = slots - 1; i >= 0; i--) {
        long offset = SEGMENT_HEADER_BYTES + i * SLOT_BYTES;
        long recordHandle = segment.getLong(offset + 16);
        long slot = ((long) index << 32) | i;
        if (recordHandle == 0) {
          pushFree(slot);
        } else {
          visitor.accept(slot, new UUID(segment.getLong(offset), segment.getLong(offset + 8)), recordHandle);
        }
      }
      next = segment.getLong(0);
    }
    segments = found.toArray(new MemoryBlock[0]);
  }

  /**
   * Takes a free slot (growing the directory when none is left); give it back with
   * {@link #release} if the transaction meant to fill it fails.
   *
   * @throws io.dataclay.exceptions.StoreFullException when the directory cannot grow
   */
  public synchronized long take() {
    if (freeCount == 0) {
      grow();
    }
    return free[--freeCount];
  }

  /** Returns a slot whose handle is 0 (never filled, or emptied by a committed transaction). */
  public synchronized void release(long slot) {
    pushFree(slot);
  }

  /** Fills a slot with an object and its record; inside the caller's transaction. */
  public void assign(long slot, UUID id, long handle) {
    MemoryBlock segment = segments[(int) (slot >>> 32)];
    long offset = SEGMENT_HEADER_BYTES + (int) slot * SLOT_BYTES;
    segment.addToTransaction(offset, SLOT_BYTES);
    segment.setLong(offset, id.getMostSignificantBits());
    segment.setLong(offset + 8, id.getLeastSignificantBits());
    segment.setLong(offset + 16, handle);
  }

  /** Points a filled slot at another record, or empties it with 0; inside the caller's transaction. */
  public void setHandle(long slot, long handle) {
    MemoryBlock segment = segments[(int) (slot >>> 32)];
    long offset = SEGMENT_HEADER_BYTES + (int) slot * SLOT_BYTES + 16;
    segment.addToTransaction(offset, 8);
    segment.setLong(offset, handle);
  }

  /** Bytes the directory occupies in the pool. */
  public long bytes() {
    long total = ROOT_BYTES;
    for (MemoryBlock segment : segments) {
      total += segment.size();
    }
    return total;
  }

  private void grow() {
    MemoryBlock[] current = segments;
    int slots = FIRST_SEGMENT_SLOTS;
    for (int i = 0; i < current.length && slots < MAX_SEGMENT_SLOTS; i++) {
      slots *= 2;
    }
    int count = slots;
    MemoryBlock segment = PmemHeap.transaction(heap, () -> {
      MemoryBlock block = heap.allocateMemoryBlock(SEGMENT_HEADER_BYTES + count * SLOT_BYTES, true);
      // Allocated zeroed in this transaction: every slot is free, and no undo log is needed.
      block.setLong(8, count);
      block.flush(8, 8);
      MemoryBlock previous = current.length == 0 ? root : current[current.length - 1];
      long linkOffset = current.length == 0 ? FIRST_SEGMENT_OFFSET : 0;
      previous.addToTransaction(linkOffset, 8);
      previous.setLong(linkOffset, block.handle());
      return block;
    }, () -> "pool is full: no room to grow the object directory by " + count + " slots");
    MemoryBlock[] grown = Arrays.copyOf(current, current.length + 1);
    grown[current.length] = segment;
    segments = grown;
    for (int i = count - 1; i >= 0; i--) {
      pushFree(((long) current.length << 32) | i);
    }
  }

  private void pushFree(long slot) {
    if (freeCount == free.length) {
      free = Arrays.copyOf(free, free.length * 2);
    }
    free[freeCount++] = slot;
  }
}
