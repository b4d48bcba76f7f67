package io.dataclay.ds.store.heap;

import com.intel.pmem.llpl.MemoryBlock;
import io.dataclay.ds.store.ObjectHeader;
import java.util.HashMap;
import java.util.Map;

/**
 * Where one stored object lies in the heap engine's pool, kept in DRAM so that reads and field
 * updates never parse persistent memory: its object block (header and field table), its
 * directory slot, and the place of every field (in order). Immutable: a writer builds a new
 * layout and swaps it in under the object's write lock.
 *
 * @param table the object block
 * @param header the object's header (a canonical instance)
 * @param slot the object's slot in the persistent directory
 * @param fields the fields in the object's field order
 * @param poolBytes bytes of pool blocks the object occupies (object block and value blocks)
 */
record ObjectLayout(MemoryBlock table, ObjectHeader header, long slot, Field[] fields, long poolBytes) {

  /**
   * The place of one field. An inline field's value and references lie in the object block in a
   * reserved area of {@code capacity} bytes; any other field's lie in a value block of its own.
   *
   * @param name the field name
   * @param valueLength bytes of the value
   * @param refCount references stored after the value (16 bytes each)
   * @param metaOffset offset in the object block of the entry's value length (followed by the
   *     reference count, then the inline capacity or the value block's handle)
   * @param capacity inline: bytes reserved for value and references; out of line: 0
   * @param block out of line: the value block; inline: null
   */
  record Field(String name, int valueLength, int refCount, int metaOffset, int capacity, MemoryBlock block) {
    /** Whether the value lies in the object block. */
    boolean inline() {
      return block == null;
    }

    /** Bytes of value and references. */
    long contentLength() {
      return valueLength + 16L * refCount;
    }

    /** Offset of the inline content in the object block. */
    int contentOffset() {
      return metaOffset + ObjectBlocks.META_BYTES;
    }

    /** This field with another value length and reference count, in the same place. */
    Field resized(int newValueLength, int newRefCount) {
      return new Field(name, newValueLength, newRefCount, metaOffset, capacity, block);
    }

    /** This out-of-line field moved to another value block. */
    Field movedTo(MemoryBlock newBlock, int newValueLength, int newRefCount) {
      return new Field(name, newValueLength, newRefCount, metaOffset, 0, newBlock);
    }
  }

  /** Bytes of field values and references (what a read copies). */
  long contentBytes() {
    long total = 0;
    for (Field f : fields) {
      total += f.contentLength();
    }
    return total;
  }

  /** Index of each field by name. */
  Map<String, Integer> positions() {
    Map<String, Integer> positions = new HashMap<>(fields.length * 2);
    for (int i = 0; i < fields.length; i++) {
      positions.put(fields[i].name(), i);
    }
    return positions;
  }

  /** This layout with other fields, in the same object block. */
  ObjectLayout withFields(Field[] newFields, long newPoolBytes) {
    return new ObjectLayout(table, header, slot, newFields, newPoolBytes);
  }
}
