package io.dataclay.ds.store;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

/** An object's whole stored form: its ID, header and serialised fields (in field order). */
public record StoredObject(UUID id, ObjectHeader header, Map<String, FieldValue> fields) {
  /**
   * Validates and freezes the record; field order is kept. The fields are copied, unless they come
   * from {@link #newFields}: such a map is taken over as it is.
   */
  public StoredObject {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(header, "header");
    Objects.requireNonNull(fields, "fields");
    fields = Collections.unmodifiableMap(fields instanceof HandedOver ? fields : new LinkedHashMap<>(fields));
  }

  /**
   * An empty, ordered field map for about {@code expected} fields, for code that builds a record
   * to hand over: the constructor keeps this map instead of copying it, so whoever filled it must
   * not change it once it is passed in (engines decode every read into one; the copy was a tenth
   * of a small get).
   */
  public static Map<String, FieldValue> newFields(int expected) {
    return new HandedOver(expected);
  }

  /** A field map its builder hands over to one StoredObject. */
  private static final class HandedOver extends LinkedHashMap<String, FieldValue> {
    private static final long serialVersionUID = 1L;

    HandedOver(int expected) {
      super(Math.max(4, expected * 2));
    }
  }

  /** The IDs {@code fields} reference, each once, in field order. */
  public static Set<UUID> referencesOf(Map<String, FieldValue> fields) {
    Set<UUID> refs = new LinkedHashSet<>();
    for (FieldValue f : fields.values()) {
      refs.addAll(f.references());
    }
    return refs;
  }

  /**
   * A copy whose value arrays are copies too, for engines that keep objects in DRAM: a caller
   * changing an array it handed over or got back does not change what is stored.
   */
  public StoredObject deepCopy() {
    Map<String, FieldValue> copied = newFields(fields.size());
    for (Map.Entry<String, FieldValue> e : fields.entrySet()) {
      copied.put(e.getKey(), copy(e.getValue()));
    }
    return new StoredObject(id, header, copied);
  }

  /**
   * This object with {@code delta} applied: changed fields replaced by copies of the delta's
   * values, removed ones dropped, the others shared with this object (which is left unchanged).
   */
  public StoredObject withDelta(ObjectDelta delta) {
    Map<String, FieldValue> updated = newFields(fields.size() + delta.changed().size());
    updated.putAll(fields);
    for (Map.Entry<String, FieldValue> e : delta.changed().entrySet()) {
      updated.put(e.getKey(), copy(e.getValue()));
    }
    updated.keySet().removeAll(delta.removed());
    return new StoredObject(id, header, updated);
  }

  private static FieldValue copy(FieldValue value) {
    return new FieldValue(value.value().clone(), value.references());
  }

  /** Total bytes of field values (for size accounting and benchmarks). */
  public long valueBytes() {
    long n = 0;
    for (FieldValue f : fields.values()) {
      n += f.value().length;
    }
    return n;
  }
}
