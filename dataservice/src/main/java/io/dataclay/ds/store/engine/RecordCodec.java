package io.dataclay.ds.store.engine;

import io.dataclay.common.Language;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Encodes a stored object as one compact byte record, so an engine moves it in one bulk copy, and
 * decodes it back from wherever it lies ({@link RecordInput}); {@link RecordEdit} plans how a
 * delta changes a record. Thread-safe. Layout (format 1); "varint" is an unsigned LEB128 int:
 *
 * <pre>
 *   byte    format (1)
 *   int32   header length H, big-endian
 *   H bytes header: str className, byte language (1 Python, 2 Java), str dataset,
 *                   nstr versionOf, nstr masterBackendId
 *   varint  field count; per field: str name, varint value length, value bytes,
 *           varint reference count, 16 bytes per reference (most then least significant bits)
 *   str  = varint UTF-8 length, UTF-8 bytes;  nstr = varint (length + 1), 0 for null
 * </pre>
 *
 * Headers repeat across objects (same class and dataset), so the codec keeps a bounded set of
 * canonical headers with their encoding: the DRAM index of a large pool shares them.
 */
public final class RecordCodec {
  /** Largest record (it must fit in one Java array). */
  public static final int MAX_RECORD_BYTES = Integer.MAX_VALUE - 64;

  static final int PREFIX_BYTES = 5;
  private static final byte FORMAT = 1;
  private static final int CANONICAL_HEADERS = 4096;

  private record Canonical(ObjectHeader header, byte[] bytes) {}

  private final ConcurrentHashMap<ObjectHeader, Canonical> headers = new ConcurrentHashMap<>();
  private final NameCache fieldNames = new NameCache();

  /**
   * Encodes {@code object}; the record is what {@link #decode} turns back into an equal object.
   *
   * @throws InvalidArgumentException when a field has no name or no value, or the record would
   *     exceed {@link #MAX_RECORD_BYTES}
   */
  public byte[] encode(StoredObject object) {
    if (object == null) {
      throw new InvalidArgumentException("object to store is missing");
    }
    byte[] header = encodedHeader(object.header());
    Map<String, FieldValue> fields = object.fields();
    byte[][] names = new byte[fields.size()][];
    long size = PREFIX_BYTES + header.length + RecordBytes.varintSize(fields.size());
    int i = 0;
    for (Map.Entry<String, FieldValue> e : fields.entrySet()) {
      byte[] name = checkedName(e.getKey(), object.id());
      checkValue(e.getKey(), e.getValue(), object.id());
      names[i++] = name;
      size += fieldSize(name, e.getValue());
    }
    byte[] out = allocate(size, object.id());
    out[0] = FORMAT;
    RecordBytes.putInt(out, 1, header.length);
    System.arraycopy(header, 0, out, PREFIX_BYTES, header.length);
    int p = RecordBytes.putVarint(out, PREFIX_BYTES + header.length, fields.size());
    i = 0;
    for (FieldValue value : fields.values()) {
      p = writeField(out, p, names[i++], value);
    }
    return out;
  }

  /** Decodes only the header of a record (the canonical instance when there is one). */
  public ObjectHeader decodeHeader(RecordInput record, UUID id) {
    try {
      int end = headerEnd(record, id);
      RecordBytes in = new RecordBytes(record, PREFIX_BYTES, end);
      String className = in.string();
      Language language = switch (in.readByte()) {
        case 1 -> Language.PYTHON;
        case 2 -> Language.JAVA;
        default -> throw corrupt(id, "unknown language code");
      };
      return canonical(new ObjectHeader(className, language, in.string(), in.nullableString(), in.nullableString()));
    } catch (IndexOutOfBoundsException e) {
      throw corrupt(id, "header runs past its end");
    }
  }

  /** Decodes a whole record whose header is already known (engines cache headers). */
  public StoredObject decode(UUID id, RecordInput record, ObjectHeader header) {
    try {
      RecordBytes in = new RecordBytes(record, headerEnd(record, id), record.length());
      int count = in.varint();
      Map<String, FieldValue> fields = StoredObject.newFields(in.checkedCount(count, 4));
      for (int i = 0; i < count; i++) {
        String name = in.name(fieldNames);
        byte[] value = in.bytes(in.varint());
        int refCount = in.varint();
        List<UUID> refs;
        if (refCount == 0) {
          refs = List.of();
        } else {
          UUID[] ids = new UUID[in.checkedCount(refCount, 16)];
          for (int r = 0; r < refCount; r++) {
            ids[r] = new UUID(in.longValue(), in.longValue());
          }
          refs = List.of(ids);
        }
        fields.put(name, new FieldValue(value, refs));
      }
      return new StoredObject(id, header, fields);
    } catch (IndexOutOfBoundsException e) {
      throw corrupt(id, "fields run past the record's end");
    }
  }

  /** The IDs a record's fields reference, each once, in field order; values are skipped, not copied. */
  public Set<UUID> references(UUID id, RecordInput record) {
    try {
      RecordBytes in = new RecordBytes(record, headerEnd(record, id), record.length());
      int count = in.varint();
      Set<UUID> refs = new LinkedHashSet<>();
      for (int i = 0; i < count; i++) {
        in.skip(in.varint()); // name
        in.skip(in.varint()); // value
        int refCount = in.checkedCount(in.varint(), 16);
        for (int r = 0; r < refCount; r++) {
          refs.add(new UUID(in.longValue(), in.longValue()));
        }
      }
      return refs;
    } catch (IndexOutOfBoundsException e) {
      throw corrupt(id, "fields run past the record's end");
    }
  }

  /** Decodes a whole record, header included. */
  public StoredObject decode(UUID id, RecordInput record) {
    return decode(id, record, decodeHeader(record, id));
  }

  /** The canonical instance of a header equal to {@code header} (bounded; may be itself). */
  public ObjectHeader canonical(ObjectHeader header) {
    Canonical known = headers.get(header);
    if (known != null) {
      return known.header();
    }
    encodedHeader(header);
    return header;
  }

  /**
   * Checks a batch an engine is about to store (the list given, no object missing, no ID twice)
   * and returns the objects' IDs in batch order.
   *
   * @throws InvalidArgumentException naming what is wrong
   */
  public static List<UUID> batchIds(List<StoredObject> objects) {
    if (objects == null) {
      throw new InvalidArgumentException("objects to store are missing");
    }
    List<UUID> ids = new ArrayList<>(objects.size());
    Set<UUID> distinct = new HashSet<>();
    for (int i = 0; i < objects.size(); i++) {
      StoredObject object = objects.get(i);
      if (object == null) {
        throw new InvalidArgumentException("object " + i + " of the batch is missing");
      }
      if (!distinct.add(object.id())) {
        throw new InvalidArgumentException("object " + object.id() + " appears twice in one batch");
      }
      ids.add(object.id());
    }
    return ids;
  }

  /**
   * Checks an object an engine is about to store: every field named and valued ({@link #encode}
   * checks the same).
   *
   * @throws InvalidArgumentException naming what is wrong
   */
  public static void check(StoredObject object) {
    if (object == null) {
      throw new InvalidArgumentException("object to store is missing");
    }
    checkFields(object.fields(), object.id());
  }

  /**
   * Checks a delta an engine is about to apply: named, valued fields, none both changed and removed.
   *
   * @throws InvalidArgumentException naming what is wrong
   */
  public static void check(ObjectDelta delta) {
    if (delta == null) {
      throw new InvalidArgumentException("delta is missing");
    }
    checkFields(delta.changed(), delta.id());
    for (String name : delta.changed().keySet()) {
      if (delta.removed().contains(name)) {
        throw new InvalidArgumentException(
            "delta of object " + delta.id() + " both changes and removes field '" + name + "'");
      }
    }
  }

  /** Checks that every one of {@code fields} of object {@code id} is named and valued. */
  private static void checkFields(Map<String, FieldValue> fields, UUID id) {
    for (Map.Entry<String, FieldValue> e : fields.entrySet()) {
      checkedName(e.getKey(), id);
      checkValue(e.getKey(), e.getValue(), id);
    }
  }

  /** Where the header ends (and the field count starts) in {@code record}. */
  static int headerEnd(RecordInput record, UUID id) {
    if (record.length() < PREFIX_BYTES || record.get(0) != FORMAT) {
      throw corrupt(id, "unknown record format " + (record.length() == 0 ? "(empty)" : record.get(0)));
    }
    int length = new RecordBytes(record, 1, PREFIX_BYTES).int32();
    if (length < 0 || length > record.length() - PREFIX_BYTES) {
      throw corrupt(id, "header length " + length + " does not fit the record");
    }
    return PREFIX_BYTES + length;
  }

  static long fieldSize(byte[] name, FieldValue value) {
    return RecordBytes.stringSize(name) + valueSize(value);
  }

  /** Bytes of a field's encoding after its name: value length, value, references. */
  static long valueSize(FieldValue value) {
    int refs = value.references().size();
    return RecordBytes.varintSize(value.value().length) + (long) value.value().length
        + RecordBytes.varintSize(refs) + 16L * refs;
  }

  static int writeField(byte[] out, int p, byte[] name, FieldValue value) {
    return writeValue(out, RecordBytes.putString(out, p, name), value);
  }

  static int writeValue(byte[] out, int p, FieldValue value) {
    byte[] bytes = value.value();
    p = RecordBytes.putVarint(out, p, bytes.length);
    System.arraycopy(bytes, 0, out, p, bytes.length);
    p += bytes.length;
    List<UUID> refs = value.references();
    p = RecordBytes.putVarint(out, p, refs.size());
    for (UUID ref : refs) {
      RecordBytes.putLong(out, p, ref.getMostSignificantBits());
      RecordBytes.putLong(out, p + 8, ref.getLeastSignificantBits());
      p += 16;
    }
    return p;
  }

  static byte[] allocate(long size, UUID id) {
    if (size > MAX_RECORD_BYTES) {
      throw new InvalidArgumentException(
          "object " + id + " encodes to " + size + " bytes, more than a record holds (" + MAX_RECORD_BYTES + ")");
    }
    return new byte[(int) size];
  }

  static InternalException corrupt(UUID id, String what) {
    return new InternalException("stored record of object " + id + " is corrupt: " + what);
  }

  static byte[] checkedName(String name, UUID id) {
    if (name == null || name.isEmpty()) {
      throw new InvalidArgumentException(
          "object " + id + " has a field with " + (name == null ? "no" : "an empty") + " name");
    }
    return name.getBytes(StandardCharsets.UTF_8);
  }

  private static void checkValue(String name, FieldValue value, UUID id) {
    if (value == null) {
      throw new InvalidArgumentException("field '" + name + "' of object " + id + " has no value");
    }
  }

  private byte[] encodedHeader(ObjectHeader header) {
    Canonical known = headers.get(header);
    if (known != null) {
      return known.bytes();
    }
    byte[] className = header.className().getBytes(StandardCharsets.UTF_8);
    byte[] dataset = header.dataset().getBytes(StandardCharsets.UTF_8);
    byte[] versionOf = header.versionOf() == null ? null : header.versionOf().getBytes(StandardCharsets.UTF_8);
    byte[] master =
        header.masterBackendId() == null ? null : header.masterBackendId().getBytes(StandardCharsets.UTF_8);
    long size = RecordBytes.stringSize(className) + 1 + RecordBytes.stringSize(dataset)
        + RecordBytes.nullableStringSize(versionOf) + RecordBytes.nullableStringSize(master);
    if (size > MAX_RECORD_BYTES) {
      throw new InvalidArgumentException("object header is too large (" + size + " bytes)");
    }
    byte[] bytes = new byte[(int) size];
    int p = RecordBytes.putString(bytes, 0, className);
    bytes[p++] = (byte) (header.language() == Language.PYTHON ? 1 : 2);
    p = RecordBytes.putString(bytes, p, dataset);
    p = RecordBytes.putNullableString(bytes, p, versionOf);
    RecordBytes.putNullableString(bytes, p, master);
    if (headers.size() < CANONICAL_HEADERS) {
      headers.putIfAbsent(header, new Canonical(header, bytes));
    }
    return bytes;
  }
}
