package io.dataclay.ds.store.heap;

import com.intel.pmem.llpl.MemoryBlock;
import io.dataclay.ds.store.heap.ObjectLayout.Field;

/**
 * Overwrites a removed object's bytes in the heap engine's pool before its blocks are freed. The
 * removal commits by marking the object block {@link ObjectBlocks#ERASING} (a 4-byte undo log);
 * {@link #zero} then overwrites, without an undo log, everything that said something about the
 * object (header, field names, inline values and references, value blocks) and keeps only the
 * block's structure (lengths, kinds, handles), so that after a crash the next open can walk the
 * block, zero it again and free it. The object never reappears half-zeroed: it is removed from the
 * moment the mark commits.
 */
final class ObjectErasure {
  private ObjectErasure() {}

  /** Marks the object removed, inside the caller's transaction; returns the bytes logged. */
  static long markErasing(ObjectLayout layout) {
    layout.table().addToTransaction(0, 4);
    layout.table().setInt(0, ObjectBlocks.ERASING);
    return 4;
  }

  /** Whether the object's removal committed but its erasure may not have finished. */
  static boolean erasing(ObjectLayout layout) {
    return layout.table().getInt(0) == ObjectBlocks.ERASING;
  }

  /** Overwrites the object's contents with zeros, flushed; outside any transaction. */
  static void zero(ObjectLayout layout) {
    MemoryBlock table = layout.table();
    int headerLength = table.getInt(4);
    zero(table, ObjectBlocks.PREFIX_BYTES, headerLength);
    // Entries follow the header back to back: int name length, name, byte kind, then the meta and
    // the inline area or the value block's handle. Positions come from the layout, never from the
    // (possibly half-zeroed) name text, so a second pass after a crash zeroes the same ranges.
    long entry = ObjectBlocks.PREFIX_BYTES + (long) headerLength;
    for (Field f : layout.fields()) {
      zero(table, entry + 4, f.metaOffset() - 1L - (entry + 4));
      if (f.inline()) {
        zero(table, f.contentOffset(), f.capacity());
        entry = f.contentOffset() + (long) f.capacity();
      } else {
        zero(f.block(), 0, f.block().size());
        entry = f.metaOffset() + 16L;
      }
    }
  }

  private static void zero(MemoryBlock block, long offset, long length) {
    if (length > 0) {
      block.setMemory((byte) 0, offset, length);
      block.flush(offset, length); // durable before the transaction that frees the block commits
    }
  }
}
