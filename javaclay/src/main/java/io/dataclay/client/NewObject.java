package io.dataclay.client;

import io.dataclay.common.Language;
import io.dataclay.serialization.EncodedField;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * A new object's stored form for MakePersistent: its ID, class, and each field's encoded value
 * with the objects it references, in the order given.
 */
public record NewObject(UUID id, String className, Language language, Map<String, EncodedField> fields) {
  /** Freezes the fields, keeping their order. */
  public NewObject {
    fields = Collections.unmodifiableMap(new LinkedHashMap<>(fields));
  }
}
