package io.dataclay.ds.store;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

/** A change to a stored object: the fields that changed and those removed; others stay. */
public record ObjectDelta(UUID id, Map<String, FieldValue> changed, Set<String> removed) {
  /** Validates and freezes the delta. */
  public ObjectDelta {
    Objects.requireNonNull(id, "id");
    changed = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(changed, "changed")));
    removed = Set.copyOf(Objects.requireNonNull(removed, "removed"));
  }
}
