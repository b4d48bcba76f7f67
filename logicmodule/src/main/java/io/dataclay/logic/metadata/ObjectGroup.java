package io.dataclay.logic.metadata;

import java.util.List;
import java.util.Objects;

/**
 * Objects one Data Service call stored (a make_persistent, a method's new objects, a version),
 * registered together with {@code alias} (when not null, given to {@code aliasObjectId}) or not at all.
 */
public record ObjectGroup(List<ObjectRecord> objects, String alias, String aliasObjectId) {
  /** Copies the list; an alias comes with the object it names. */
  public ObjectGroup {
    objects = List.copyOf(objects);
    if (alias != null) {
      Objects.requireNonNull(aliasObjectId, "aliasObjectId");
    }
  }
}
