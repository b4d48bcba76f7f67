package io.dataclay.ds.store.engine;

import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.exceptions.InvalidArgumentException;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * How a delta changes an encoded record ({@link RecordCodec} layout), planned by reading only the
 * record's structure, never the values it keeps. Either the edit is in place (every changed field
 * keeps its encoded size, none is removed or added: the engine overwrites just those bytes) or
 * the record is rebuilt from ranges of the old one and new bytes.
 */
public final class RecordEdit {
  /** Receives the new bytes of an edit. */
  public interface Writes {
    /** {@code bytes} go to {@code to} in the new record (in place: over the old bytes there). */
    void write(byte[] bytes, int to);
  }

  /** Receives the pieces of a rebuilt record in record order. */
  public interface Pieces extends Writes {
    /** {@code length} bytes at {@code from} in the old record go to {@code to} in the new one. */
    void copy(int from, int to, int length);
  }

  private final boolean inPlace;
  private int length;
  private int count;
  private int[] from = new int[8];
  private int[] to = new int[8];
  private int[] lengths = new int[8];
  private byte[][] bytes = new byte[8][];

  private RecordEdit(boolean inPlace) {
    this.inPlace = inPlace;
  }

  /**
   * Plans {@code delta} on the record {@code old}: changed fields replaced where they are (new ones
   * appended in the delta's order), removed ones dropped, everything else kept byte for byte.
   *
   * @throws io.dataclay.exceptions.InvalidArgumentException when the delta is malformed
   * @throws io.dataclay.exceptions.InternalException when the record is corrupt
   */
  public static RecordEdit plan(RecordInput old, ObjectDelta delta) {
    RecordCodec.check(delta);
    UUID id = delta.id();
    int headerEnd = RecordCodec.headerEnd(old, id);
    String[] names;
    int[] starts;
    int[] valueStarts;
    try {
      RecordBytes in = new RecordBytes(old, headerEnd, old.length());
      int fields = in.checkedCount(in.varint(), 4);
      names = new String[fields];
      starts = new int[fields + 1];
      valueStarts = new int[fields];
      for (int i = 0; i < fields; i++) {
        starts[i] = in.position();
        names[i] = in.string();
        valueStarts[i] = in.position();
        in.skip(in.varint());
        in.skip(16L * in.varint());
      }
      starts[fields] = in.position();
    } catch (IndexOutOfBoundsException e) {
      throw RecordCodec.corrupt(id, "fields run past the record's end");
    }
    Map<String, FieldValue> changed = delta.changed();
    Set<String> present = new HashSet<>(Arrays.asList(names));
    boolean sameShape = present.containsAll(changed.keySet());
    int kept = 0;
    for (int i = 0; i < names.length; i++) {
      if (delta.removed().contains(names[i])) {
        sameShape = false;
      } else {
        kept++;
        FieldValue value = changed.get(names[i]);
        sameShape &= value == null || RecordCodec.valueSize(value) == starts[i + 1] - valueStarts[i];
      }
    }
    if (sameShape) {
      RecordEdit edit = new RecordEdit(true);
      edit.length = old.length();
      for (int i = 0; i < names.length; i++) {
        FieldValue value = changed.get(names[i]);
        if (value != null) {
          byte[] encoded = new byte[starts[i + 1] - valueStarts[i]];
          RecordCodec.writeValue(encoded, 0, value);
          edit.write(encoded, valueStarts[i]);
        }
      }
      return edit;
    }
    RecordEdit edit = new RecordEdit(false);
    edit.copy(0, headerEnd);
    int added = 0;
    for (String name : changed.keySet()) {
      added += present.contains(name) ? 0 : 1;
    }
    byte[] fieldCount = new byte[RecordBytes.varintSize(kept + added)];
    RecordBytes.putVarint(fieldCount, 0, kept + added);
    edit.append(fieldCount);
    for (int i = 0; i < names.length; i++) {
      FieldValue value = changed.get(names[i]);
      if (value != null) {
        edit.append(encodeField(names[i], value, id));
      } else if (!delta.removed().contains(names[i])) {
        edit.copy(starts[i], starts[i + 1] - starts[i]);
      }
    }
    for (Map.Entry<String, FieldValue> e : changed.entrySet()) {
      if (!present.contains(e.getKey())) {
        edit.append(encodeField(e.getKey(), e.getValue(), id));
      }
    }
    return edit;
  }

  /** Whether the edit only overwrites bytes of the old record (same length, same places). */
  public boolean inPlace() {
    return inPlace;
  }

  /** Length of the record after the edit. */
  public int length() {
    return length;
  }

  /**
   * Hands the writes of an in-place edit to {@code writes}.
   *
   * @throws IllegalStateException when the edit is not in place (use {@link #forEach})
   */
  public void forEachWrite(Writes writes) {
    if (!inPlace) {
      throw new IllegalStateException("the edit rebuilds the record; it has copies as well as writes");
    }
    for (int i = 0; i < count; i++) {
      writes.write(bytes[i], to[i]);
    }
  }

  /** Hands every piece to {@code pieces}, in record order. */
  public void forEach(Pieces pieces) {
    for (int i = 0; i < count; i++) {
      if (from[i] < 0) {
        pieces.write(bytes[i], to[i]);
      } else {
        pieces.copy(from[i], to[i], lengths[i]);
      }
    }
  }

  /** The edited record as one array, built from {@code old} (the record the edit was planned on). */
  public byte[] toArray(RecordInput old) {
    byte[] out = new byte[length];
    if (inPlace) {
      old.copyTo(0, out, 0, length);
    }
    forEach(new Pieces() {
      @Override
      public void copy(int source, int target, int n) {
        old.copyTo(source, out, target, n);
      }

      @Override
      public void write(byte[] data, int target) {
        System.arraycopy(data, 0, out, target, data.length);
      }
    });
    return out;
  }

  private static byte[] encodeField(String name, FieldValue value, UUID id) {
    byte[] utf8 = RecordCodec.checkedName(name, id);
    byte[] out = RecordCodec.allocate(RecordCodec.fieldSize(utf8, value), id);
    RecordCodec.writeField(out, 0, utf8, value);
    return out;
  }

  /** Appends a copy of old bytes, merged into the previous copy when both are contiguous. */
  private void copy(int source, int n) {
    int last = count - 1;
    if (last >= 0 && from[last] >= 0 && from[last] + lengths[last] == source) {
      lengths[last] += n;
    } else {
      add(source, length, n, null);
    }
    grow(n);
  }

  private void append(byte[] data) {
    add(-1, length, data.length, data);
    grow(data.length);
  }

  private void write(byte[] data, int target) {
    add(-1, target, data.length, data);
  }

  private void grow(long n) {
    long total = (long) length + n;
    if (total > RecordCodec.MAX_RECORD_BYTES) {
      throw new InvalidArgumentException(
          "the delta makes the record larger than " + RecordCodec.MAX_RECORD_BYTES + " bytes");
    }
    length = (int) total;
  }

  private void add(int source, int target, int n, byte[] data) {
    if (count == from.length) {
      from = Arrays.copyOf(from, count * 2);
      to = Arrays.copyOf(to, count * 2);
      lengths = Arrays.copyOf(lengths, count * 2);
      bytes = Arrays.copyOf(bytes, count * 2);
    }
    from[count] = source;
    to[count] = target;
    lengths[count] = n;
    bytes[count] = data;
    count++;
  }
}
