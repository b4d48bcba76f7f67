package io.dataclay.ds.store.heap;

import com.intel.pmem.llpl.Heap;
import com.intel.pmem.llpl.MemoryBlock;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.ds.store.engine.RecordCodec;
import io.dataclay.ds.store.engine.RecordInput;
import io.dataclay.ds.store.heap.ObjectLayout.Field;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.LongAdder;

/**
 * The heap engine's objects laid out field by field in the pool. Each object has an object block
 * (header and field table) and each field whose value and references exceed {@value #INLINE_MAX}
 * bytes a value block of its own; smaller ones lie inline in the table, in an area rounded up to
 * 8 bytes so that a value may change a little in place. Numbers are in the machine's byte order.
 *
 * <pre>
 * object block: int format (1), int header length H, int field count F,
 *               H bytes header (a {@link RecordCodec} record without fields), then F entries:
 *   entry:      int name length N, N bytes UTF-8 name, byte kind (0 inline, 1 value block),
 *               int value length V, int reference count R, then
 *               inline:      int capacity C, C bytes: value, references, unused rest
 *               value block: long handle of a block holding the value, then the references
 *   reference:  long most significant bits, long least significant bits
 * </pre>
 *
 * Every write method runs inside the caller's PMDK transaction, and counts the bytes it writes to
 * the pool (logged or fresh) so that tests can check what an update costs.
 */
final class ObjectBlocks {
  /** Content (value and references) up to this many bytes lies inline in the object block. */
  static final int INLINE_MAX = 128;
  /** Bytes of an inline entry's value length, reference count and capacity. */
  static final int META_BYTES = 12;

  /** Format of an object block whose removal committed and whose erasure may not have finished. */
  static final int ERASING = -1;
  /** Bytes of an object block's format, header length and field count. */
  static final int PREFIX_BYTES = 12;

  private static final int FORMAT = 1;
  private static final byte INLINE = 0;
  private static final byte OUT_OF_LINE = 1;
  private static final int MAX_TABLE_BYTES = Integer.MAX_VALUE - 64;

  private final Heap heap;
  private final RecordCodec codec;
  private final LongAdder written = new LongAdder();

  ObjectBlocks(Heap heap, RecordCodec codec) {
    this.heap = heap;
    this.codec = codec;
  }

  /** Bytes written to the pool since open (fresh blocks and logged overwrites). */
  long bytesWritten() {
    return written.sum();
  }

  /** Counts bytes the caller wrote to the pool outside this class (directory slots). */
  void countWritten(long bytes) {
    written.add(bytes);
  }

  /** Writes {@code object} into new blocks; returns its layout (the slot is the caller's to fill). */
  ObjectLayout writeNew(StoredObject object, ObjectHeader header, long slot) {
    Map<String, FieldValue> fields = object.fields();
    List<Planned> planned = new ArrayList<>(fields.size());
    for (Map.Entry<String, FieldValue> e : fields.entrySet()) {
      planned.add(Planned.of(e.getKey(), e.getValue(), object.id()));
    }
    return writeTable(object.id(), header, slot, planned, null);
  }

  /**
   * Applies {@code delta} to the object laid out as {@code old}. A changed field that keeps its
   * content size (or stays within its inline area) is overwritten where it is, under an undo log
   * of just its bytes; an out-of-line field that changes size moves to a new value block and only
   * its table entry changes. Only adding or removing a field, or an inline value outgrowing its
   * area, writes a new object block, into which the untouched fields' value blocks are linked,
   * not copied. Returns the new layout; when its object block differs from the old one, the
   * caller points the directory slot at it (in the same transaction) and the old one is freed.
   */
  ObjectLayout applyDelta(ObjectLayout old, ObjectDelta delta) {
    Map<String, Integer> positions = old.positions();
    boolean rebuild = false;
    for (String removed : delta.removed()) {
      rebuild |= positions.containsKey(removed);
    }
    for (Map.Entry<String, FieldValue> e : delta.changed().entrySet()) {
      Integer at = positions.get(e.getKey());
      rebuild |= at == null || (old.fields()[at].inline() && contentLength(e.getValue()) > old.fields()[at].capacity());
    }
    if (rebuild) {
      return rebuild(old, delta, positions);
    }
    Field[] fields = old.fields().clone();
    long poolBytes = old.poolBytes();
    for (Map.Entry<String, FieldValue> e : delta.changed().entrySet()) {
      int at = positions.get(e.getKey());
      Field f = fields[at];
      FieldValue value = e.getValue();
      int refs = value.references().size();
      if (f.inline()) {
        // Undo-logged: a crash restores the old entry whole or leaves the new one whole.
        long length = META_BYTES + contentLength(value);
        old.table().addToTransaction(f.metaOffset(), length);
        old.table().setInt(f.metaOffset(), value.value().length);
        old.table().setInt(f.metaOffset() + 4, refs);
        writeContent(old.table(), f.contentOffset(), value);
        written.add(length);
        fields[at] = f.resized(value.value().length, refs);
      } else if (contentLength(value) == f.contentLength()) {
        f.block().addToTransaction(0, f.contentLength());
        writeContent(f.block(), 0, value);
        written.add(f.contentLength());
        if (f.valueLength() != value.value().length) {
          old.table().addToTransaction(f.metaOffset(), 8);
          old.table().setInt(f.metaOffset(), value.value().length);
          old.table().setInt(f.metaOffset() + 4, refs);
          written.add(8);
        }
        fields[at] = f.resized(value.value().length, refs);
      } else {
        MemoryBlock block = newValueBlock(value, delta.id());
        old.table().addToTransaction(f.metaOffset(), 16);
        old.table().setInt(f.metaOffset(), value.value().length);
        old.table().setInt(f.metaOffset() + 4, refs);
        old.table().setLong(f.metaOffset() + 8, block.handle());
        written.add(16);
        poolBytes += block.size() - f.block().size();
        free(f.block());
        fields[at] = f.movedTo(block, value.value().length, refs);
      }
    }
    return old.withFields(fields, poolBytes);
  }

  /** Frees every block of an object (when the transaction commits; kept if it aborts). */
  void freeAll(ObjectLayout layout) {
    for (Field f : layout.fields()) {
      if (!f.inline()) {
        free(f.block());
      }
    }
    free(layout.table());
  }

  /** The IDs the object's fields reference, each once, in field order; no value is read. */
  Set<UUID> references(ObjectLayout layout) {
    Set<UUID> refs = new LinkedHashSet<>();
    for (Field f : layout.fields()) {
      if (f.refCount() > 0) {
        MemoryBlock from = f.inline() ? layout.table() : f.block();
        long at = (f.inline() ? f.contentOffset() : 0) + f.valueLength();
        byte[] raw = new byte[16 * f.refCount()];
        from.copyToArray(at, raw, 0, raw.length);
        ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.nativeOrder());
        for (int r = 0; r < f.refCount(); r++) {
          refs.add(new UUID(b.getLong(), b.getLong()));
        }
      }
    }
    return refs;
  }

  /** Copies the object's values and references out of the pool. */
  StoredObject read(UUID id, ObjectLayout layout) {
    Field[] fields = layout.fields();
    Map<String, FieldValue> values = StoredObject.newFields(fields.length);
    for (Field f : fields) {
      MemoryBlock from = f.inline() ? layout.table() : f.block();
      long at = f.inline() ? f.contentOffset() : 0;
      byte[] value = new byte[f.valueLength()];
      if (value.length > 0) { // llpl refuses zero-length copies
        from.copyToArray(at, value, 0, value.length);
      }
      List<UUID> refs = List.of();
      if (f.refCount() > 0) {
        byte[] raw = new byte[16 * f.refCount()];
        from.copyToArray(at + value.length, raw, 0, raw.length);
        ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.nativeOrder());
        UUID[] ids = new UUID[f.refCount()];
        for (int r = 0; r < ids.length; r++) {
          ids[r] = new UUID(b.getLong(), b.getLong());
        }
        refs = List.of(ids);
      }
      values.put(f.name(), new FieldValue(value, refs));
    }
    return new StoredObject(id, layout.header(), values);
  }

  /**
   * Rebuilds the DRAM layout of the object whose object block is {@code handle} (at open). A block
   * marked {@link #ERASING} gives a layout without header, for {@link ObjectErasure} to finish.
   *
   * @throws InternalException when the block does not hold a well-formed object
   */
  ObjectLayout load(UUID id, long handle, long slot) {
    MemoryBlock table = heap.memoryBlockFromHandle(handle);
    long size = table.size();
    int format = size < PREFIX_BYTES ? 0 : table.getInt(0);
    if (format != FORMAT && format != ERASING) {
      throw corrupt(id, "unknown object block format");
    }
    int headerLength = table.getInt(4);
    int count = table.getInt(8);
    if (headerLength <= 0 || headerLength > size - PREFIX_BYTES || count < 0 || count > size) {
      throw corrupt(id, "header length " + headerLength + " or field count " + count + " does not fit");
    }
    byte[] header = new byte[headerLength];
    table.copyToArray(PREFIX_BYTES, header, 0, headerLength);
    // Erasing: the header may be zeroed already, and nobody reads it again.
    ObjectHeader objectHeader = format == ERASING ? null : codec.decodeHeader(RecordInput.of(header), id);
    long p = PREFIX_BYTES + (long) headerLength;
    Field[] fields = new Field[count];
    long poolBytes = size;
    for (int i = 0; i < count; i++) {
      int nameLength = checked(table, p, 4, size, id).getInt(p);
      checked(table, p + 4, nameLength + 1L + 8, size, id);
      byte[] name = new byte[nameLength];
      table.copyToArray(p + 4, name, 0, nameLength);
      p += 4 + nameLength;
      byte kind = table.getByte(p);
      int metaOffset = (int) (p + 1);
      int valueLength = table.getInt(metaOffset);
      int refCount = table.getInt(metaOffset + 4);
      if (valueLength < 0 || refCount < 0) {
        throw corrupt(id, "negative length in field " + i);
      }
      long content = valueLength + 16L * refCount;
      if (kind == INLINE) {
        int capacity = checked(table, metaOffset + 8L, 4, size, id).getInt(metaOffset + 8);
        if (capacity < content) {
          throw corrupt(id, "inline value of field " + i + " exceeds its area");
        }
        checked(table, metaOffset + (long) META_BYTES, capacity, size, id);
        fields[i] = new Field(new String(name, StandardCharsets.UTF_8), valueLength, refCount, metaOffset, capacity, null);
        p = metaOffset + (long) META_BYTES + capacity;
      } else if (kind == OUT_OF_LINE) {
        MemoryBlock block = heap.memoryBlockFromHandle(checked(table, metaOffset + 8L, 8, size, id).getLong(metaOffset + 8));
        if (block.size() < content) {
          throw corrupt(id, "value block of field " + i + " is smaller than its value");
        }
        poolBytes += block.size();
        fields[i] = new Field(new String(name, StandardCharsets.UTF_8), valueLength, refCount, metaOffset, 0, block);
        p = metaOffset + 16L;
      } else {
        throw corrupt(id, "unknown kind " + kind + " of field " + i);
      }
    }
    return new ObjectLayout(table, objectHeader, slot, fields, poolBytes);
  }

  private ObjectLayout rebuild(ObjectLayout old, ObjectDelta delta, Map<String, Integer> positions) {
    List<Planned> planned = new ArrayList<>(old.fields().length + delta.changed().size());
    for (Field f : old.fields()) {
      FieldValue value = delta.changed().get(f.name());
      if (value == null) {
        if (delta.removed().contains(f.name())) {
          if (!f.inline()) {
            free(f.block());
          }
        } else {
          planned.add(Planned.kept(f));
        }
      } else if (!f.inline() && contentLength(value) == f.contentLength()) {
        f.block().addToTransaction(0, f.contentLength());
        writeContent(f.block(), 0, value);
        written.add(f.contentLength());
        planned.add(Planned.kept(f.resized(value.value().length, value.references().size())));
      } else {
        if (!f.inline()) {
          free(f.block());
        }
        planned.add(Planned.of(f.name(), value, delta.id()));
      }
    }
    for (Map.Entry<String, FieldValue> e : delta.changed().entrySet()) {
      if (!positions.containsKey(e.getKey())) {
        planned.add(Planned.of(e.getKey(), e.getValue(), delta.id()));
      }
    }
    ObjectLayout rebuilt = writeTable(delta.id(), old.header(), old.slot(), planned, old.table());
    free(old.table());
    return rebuilt;
  }

  /** Writes an object block for {@code planned} fields (and value blocks for new large values). */
  private ObjectLayout writeTable(UUID id, ObjectHeader header, long slot, List<Planned> planned, MemoryBlock oldTable) {
    byte[] headerRecord = codec.encode(new StoredObject(id, header, Map.of()));
    long size = PREFIX_BYTES + (long) headerRecord.length;
    for (Planned p : planned) {
      size += 4L + p.name().length + 1 + (p.inline() ? META_BYTES + (long) p.capacity() : 16);
    }
    if (size > MAX_TABLE_BYTES) {
      throw new InvalidArgumentException("object " + id + " has too many fields or names too long (" + size + " bytes of field table)");
    }
    byte[] t = new byte[(int) size];
    ByteBuffer b = ByteBuffer.wrap(t).order(ByteOrder.nativeOrder());
    b.putInt(FORMAT).putInt(headerRecord.length).putInt(planned.size()).put(headerRecord);
    Field[] fields = new Field[planned.size()];
    long poolBytes = 0;
    for (int i = 0; i < fields.length; i++) {
      Planned p = planned.get(i);
      b.putInt(p.name().length).put(p.name()).put(p.inline() ? INLINE : OUT_OF_LINE);
      int metaOffset = b.position();
      b.putInt(p.valueLength()).putInt(p.refCount());
      String name = p.kept() != null ? p.kept().name() : new String(p.name(), StandardCharsets.UTF_8);
      if (p.inline()) {
        b.putInt(p.capacity());
        int at = b.position();
        if (p.value() != null) {
          putContent(t, at, p.value());
        } else {
          if (p.kept().contentLength() > 0) {
            oldTable.copyToArray(p.kept().contentOffset(), t, at, (int) p.kept().contentLength());
          }
        }
        b.position(at + p.capacity());
        fields[i] = new Field(name, p.valueLength(), p.refCount(), metaOffset, p.capacity(), null);
      } else {
        MemoryBlock block = p.kept() != null ? p.kept().block() : newValueBlock(p.value(), id);
        b.putLong(block.handle());
        poolBytes += block.size();
        fields[i] = new Field(name, p.valueLength(), p.refCount(), metaOffset, 0, block);
      }
    }
    MemoryBlock table = heap.allocateMemoryBlock(t.length, true);
    // Allocated in this transaction: no undo log is needed (an abort frees it), but its bytes
    // must be durable before the slot or entry that points at it: flushed here, ordered by the
    // commit's drain. The same holds for every new value block.
    table.copyFromArray(t, 0, 0, t.length);
    table.flush(0, t.length);
    written.add(t.length);
    return new ObjectLayout(table, header, slot, fields, poolBytes + table.size());
  }

  private MemoryBlock newValueBlock(FieldValue value, UUID id) {
    long length = contentLength(value);
    MemoryBlock block = heap.allocateMemoryBlock(length, true);
    writeContent(block, 0, value);
    block.flush(0, length);
    written.add(length);
    return block;
  }

  private static void writeContent(MemoryBlock block, long at, FieldValue value) {
    byte[] bytes = value.value();
    if (bytes.length > 0) { // llpl refuses zero-length copies
      block.copyFromArray(bytes, 0, at, bytes.length);
    }
    if (!value.references().isEmpty()) {
      byte[] refs = new byte[16 * value.references().size()];
      putRefs(refs, 0, value.references());
      block.copyFromArray(refs, 0, at + bytes.length, refs.length);
    }
  }

  private static void putContent(byte[] out, int at, FieldValue value) {
    byte[] bytes = value.value();
    System.arraycopy(bytes, 0, out, at, bytes.length);
    putRefs(out, at + bytes.length, value.references());
  }

  private static void putRefs(byte[] out, int at, List<UUID> refs) {
    ByteBuffer b = ByteBuffer.wrap(out, at, 16 * refs.size()).order(ByteOrder.nativeOrder());
    for (UUID ref : refs) {
      b.putLong(ref.getMostSignificantBits()).putLong(ref.getLeastSignificantBits());
    }
  }

  private void free(MemoryBlock block) {
    // A fresh accessor: freeing invalidates the accessor used, and the caller's layout must stay
    // usable if the transaction aborts.
    heap.memoryBlockFromHandle(block.handle()).free(true);
  }

  static long contentLength(FieldValue value) {
    return value.value().length + 16L * value.references().size();
  }

  private static MemoryBlock checked(MemoryBlock table, long at, long length, long size, UUID id) {
    if (at < 0 || length < 0 || at + length > size) {
      throw corrupt(id, "field table runs past its block");
    }
    return table;
  }

  private static InternalException corrupt(UUID id, String what) {
    return new InternalException("stored object " + id + " is corrupt: " + what);
  }

  /**
   * A field of an object block about to be written: a new value, or a field kept as it was.
   *
   * @param name the field's name in UTF-8
   * @param value the new value, or null for a kept field
   * @param kept the field kept as it was, or null for a new value
   * @param valueLength bytes of the value
   * @param refCount number of references the value holds
   * @param capacity bytes of its inline area, or 0 when the value has a block of its own
   */
  private record Planned(byte[] name, FieldValue value, Field kept, int valueLength, int refCount, int capacity) {
    static Planned of(String name, FieldValue value, UUID id) {
      long content = contentLength(value);
      if (value.references().size() > (Integer.MAX_VALUE - value.value().length) / 16) {
        throw new InvalidArgumentException("field '" + name + "' of object " + id + " has too many references");
      }
      int capacity = content <= INLINE_MAX ? (int) Math.max(8, (content + 7) & ~7L) : 0;
      return new Planned(name.getBytes(StandardCharsets.UTF_8), value, null, value.value().length,
          value.references().size(), capacity);
    }

    static Planned kept(Field f) {
      return new Planned(f.name().getBytes(StandardCharsets.UTF_8), null, f, f.valueLength(), f.refCount(), f.capacity());
    }

    boolean inline() {
      return capacity > 0;
    }
  }
}
