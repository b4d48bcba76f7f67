package io.dataclay.ds.store;

import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * One serialised field value (encoded by the object's language) and the IDs of the dataClay
 * objects it references, which the Data Service uses without decoding the value.
 */
public record FieldValue(byte[] value, List<UUID> references) {
  /** Validates and freezes the reference list; the value array is not copied (callers hand it over). */
  public FieldValue {
    Objects.requireNonNull(value, "value");
    references = List.copyOf(Objects.requireNonNull(references, "references"));
  }

  /** A value that references no object. */
  public static FieldValue of(byte[] value) {
    return new FieldValue(value, List.of());
  }
}
