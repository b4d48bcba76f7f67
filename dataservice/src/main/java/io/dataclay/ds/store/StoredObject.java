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

  /** Total bytes of field values (for size accounting and benchmarks). */
  public long valueBytes() {
    long n = 0;
    for (FieldValue f : fields.values()) {
      n += f.value().length;
    }
    return n;
  }
}
