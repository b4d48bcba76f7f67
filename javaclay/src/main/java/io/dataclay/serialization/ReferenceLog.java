package io.dataclay.serialization;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/** The IDs of persistent objects written into one value, in first-seen order, without repeats. */
final class ReferenceLog {
  private final Set<UUID> ids = new LinkedHashSet<>();

  void add(UUID id) {
    ids.add(id);
  }

  List<UUID> ids() {
    return new ArrayList<>(ids);
  }
}
