package io.dataclay.ds.registration;

import io.dataclay.ds.store.StoredObject;
import java.util.List;
import java.util.UUID;

/**
 * The objects one call stored on this backend (a make_persistent, a method's new objects, a
 * version), registered with the Logic Module together with {@code alias} (when not null, given to
 * {@code aliasObjectId}) or not at all.
 */
public record RegistrationGroup(List<StoredObject> objects, String alias, UUID aliasObjectId) {
  /** Copies the list. */
  public RegistrationGroup {
    objects = List.copyOf(objects);
  }
}
