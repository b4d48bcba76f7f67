package io.dataclay.ds.store;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/** An object's whole stored form: its ID, header and serialised fields (in field order). */
public record StoredObject(UUID id, ObjectHeader header, Map<String, FieldValue> fields) {
  /** Validates and freezes the record; field order is kept. */
  public StoredObject {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(header, "header");
    fields = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(fields, "fields")));
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
