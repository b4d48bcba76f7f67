package io.dataclay.serialization;

import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * One encoded value (a field, arguments or a result) and the IDs of the persistent objects it
 * references, which servers use without decoding the value.
 */
public record EncodedField(byte[] value, List<UUID> references) {
  /** Validates and freezes the reference list (the array is handed over, not copied). */
  public EncodedField {
    Objects.requireNonNull(value, "value");
    references = List.copyOf(Objects.requireNonNull(references, "references"));
  }
}
