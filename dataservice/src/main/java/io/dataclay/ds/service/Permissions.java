package io.dataclay.ds.service;

import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.exceptions.PermissionDeniedException;
import java.util.UUID;

/** The one access rule of a Data Service: a session reaches objects of its datasets only. */
final class Permissions {
  private Permissions() {}

  /** Throws PERMISSION_DENIED unless the session may access an object of {@code header}'s dataset. */
  static void check(Session session, UUID id, ObjectHeader header) {
    if (!session.mayAccess(header.dataset())) {
      throw new PermissionDeniedException("object " + id + " belongs to dataset " + header.dataset()
          + ", which the session of " + session.username() + " may not access");
    }
  }
}
