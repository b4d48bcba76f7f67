package io.dataclay.ds.store.kv;

import com.intel.pmem.llpl.AnyMemoryBlock;
import com.intel.pmem.llpl.Heap;
import com.intel.pmem.llpl.MemoryBlock;
import io.dataclay.ds.store.engine.RecordEdit;
import io.dataclay.ds.store.engine.RecordInput;
import io.dataclay.exceptions.InternalException;
import java.util.UUID;

/**
 * The kv engine's record blocks in the pool. A block holds {@code int length} then the record,
 * with capacity rounded up to {@value #GRANULE} bytes so a record that grows a little still fits.
 * A record up to {@value #IN_PLACE_MAX} bytes that fits its block is overwritten in place with an
 * undo log (cheapest on pmem: no allocation, no free, no directory write); a larger or
 * outgrowing one goes copy-on-write into a new block. Every write method runs inside the
 * caller's PMDK transaction.
 */
final class RecordBlocks {
  /** Records up to this size are rewritten in place when they fit their block. */
  static final int IN_PLACE_MAX = 64 * 1024;

  private static final int LENGTH_BYTES = 4;
  private static final int GRANULE = 64;
  /** Length of a record whose removal committed and whose bytes are being overwritten. */
  private static final int ERASING = -1;

  private final Heap heap;

  RecordBlocks(Heap heap) {
    this.heap = heap;
  }

  /** Whether a record of {@code length} bytes may overwrite the one in {@code block}. */
  boolean fitsInPlace(MemoryBlock block, int length) {
    return length <= IN_PLACE_MAX && LENGTH_BYTES + (long) length <= block.size();
  }

  /** A new block holding {@code record}. */
  MemoryBlock writeNew(byte[] record) {
    MemoryBlock block = allocate(record.length);
    // Allocated in this transaction: its bytes need no undo log, since an abort (or a crash before
    // the commit) frees the whole block. They must be durable before the directory slot that
    // points at them is: flushed here, ordered by the commit's drain.
    block.setInt(0, record.length);
    block.copyFromArray(record, 0, LENGTH_BYTES, record.length);
    block.flush(0, LENGTH_BYTES + (long) record.length);
    return block;
  }

  /** Overwrites the record in {@code block} (see {@link #fitsInPlace}). */
  void overwrite(MemoryBlock block, byte[] record) {
    // Undo-logged: the old bytes are saved before they are overwritten, and the commit flushes
    // the range, so a crash restores the old record whole or leaves the new one whole.
    block.addToTransaction(0, LENGTH_BYTES + (long) record.length);
    block.setInt(0, record.length);
    block.copyFromArray(record, 0, LENGTH_BYTES, record.length);
  }

  /** Applies an in-place edit (the record keeps its length and layout). */
  void patch(MemoryBlock block, RecordEdit edit) {
    edit.forEachWrite((bytes, to) -> {
      // Undo-logged like overwrite(): only the changed bytes are saved and rewritten.
      block.addToTransaction(LENGTH_BYTES + (long) to, bytes.length);
      block.copyFromArray(bytes, 0, LENGTH_BYTES + to, bytes.length);
    });
  }

  /** A new block holding the edited record, its kept ranges copied pmem to pmem from {@code old}. */
  MemoryBlock writeEdited(MemoryBlock old, RecordEdit edit) {
    MemoryBlock block = allocate(edit.length());
    block.setInt(0, edit.length());
    edit.forEach(new RecordEdit.Pieces() {
      @Override
      public void copy(int from, int to, int length) {
        block.copyFromMemoryBlock(old, LENGTH_BYTES + (long) from, LENGTH_BYTES + (long) to, length);
      }

      @Override
      public void write(byte[] bytes, int to) {
        block.copyFromArray(bytes, 0, LENGTH_BYTES + to, bytes.length);
      }
    });
    block.flush(0, LENGTH_BYTES + (long) edit.length()); // as in writeNew(): durable before linked
    return block;
  }

  /** Frees a block when the transaction commits (kept if it aborts). */
  void free(MemoryBlock block) {
    // A fresh accessor: freeing invalidates the accessor used, and the caller's entry must stay
    // usable if the transaction aborts.
    heap.memoryBlockFromHandle(block.handle()).free(true);
  }

  /**
   * Marks the record in {@code block} as removed, inside the caller's transaction: once that
   * commits, the object is gone, and {@link #zero} and {@link #free} finish the job, also after a
   * crash (the kv engine does it at open for every block marked so).
   */
  void markErasing(MemoryBlock block) {
    block.addToTransaction(0, LENGTH_BYTES);
    block.setInt(0, ERASING);
  }

  /** Whether the block's removal committed but its erasure may not have finished. */
  boolean erasing(MemoryBlock block) {
    return block.size() >= LENGTH_BYTES && block.getInt(0) == ERASING;
  }

  /**
   * Overwrites a block marked {@link #markErasing erasing} with zeros, outside any transaction (no
   * undo log: the record is already removed, so a crash meanwhile loses nothing, and the next
   * open zeroes it again); flushed, so the zeros are durable before the free's commit.
   */
  void zero(MemoryBlock block) {
    long n = block.size() - LENGTH_BYTES;
    if (n > 0) {
      block.setMemory((byte) 0, LENGTH_BYTES, n);
      block.flush(LENGTH_BYTES, n);
    }
  }

  /** The record's bytes, in one bulk copy. */
  byte[] read(MemoryBlock block, int length) {
    byte[] record = new byte[length];
    block.copyToArray(LENGTH_BYTES, record, 0, length);
    return record;
  }

  /** The record read in place. */
  RecordInput input(MemoryBlock block, int length) {
    return new BlockInput(block, length);
  }

  /** The length stored in a block found by a directory scan, checked against the block's size. */
  int storedLength(MemoryBlock block, UUID id) {
    int length = block.size() < LENGTH_BYTES ? -1 : block.getInt(0);
    if (length <= 0 || LENGTH_BYTES + (long) length > block.size()) {
      throw new InternalException("stored record of object " + id + " is corrupt: length " + length
          + " in a block of " + block.size() + " bytes");
    }
    return length;
  }

  private MemoryBlock allocate(int length) {
    long capacity = (LENGTH_BYTES + (long) length + GRANULE - 1) / GRANULE * GRANULE;
    return heap.allocateMemoryBlock(length > IN_PLACE_MAX ? LENGTH_BYTES + (long) length : capacity, true);
  }

  /** A record read in place from its block. */
  private static final class BlockInput implements RecordInput {
    private final AnyMemoryBlock block;
    private final int length;

    BlockInput(AnyMemoryBlock block, int length) {
      this.block = block;
      this.length = length;
    }

    @Override
    public int length() {
      return length;
    }

    @Override
    public byte get(int position) {
      if (position < 0 || position >= length) {
        throw new IndexOutOfBoundsException("position " + position + " of a " + length + "-byte record");
      }
      return block.getByte(LENGTH_BYTES + (long) position);
    }

    @Override
    public void copyTo(int position, byte[] target, int targetOffset, int n) {
      if (position < 0 || n < 0 || position > length - n) {
        throw new IndexOutOfBoundsException("range " + position + "+" + n + " of a " + length + "-byte record");
      }
      block.copyToArray(LENGTH_BYTES + (long) position, target, targetOffset, n);
    }
  }
}
