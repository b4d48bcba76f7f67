package io.dataclay.ds.service;

import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.exceptions.PermissionDeniedException;
import java.util.UUID;

/**
 * The access rules of a Data Service: a session reads objects of its datasets only, changes
 * those it may write only, and only backends call what backends send each other.
 */
public final class Permissions {
  private Permissions() {}

  /** Throws PERMISSION_DENIED unless the session may read an object of {@code header}'s dataset. */
  public static void check(Session session, UUID id, ObjectHeader header) {
    if (!session.mayAccess(header.dataset())) {
      throw new PermissionDeniedException("object " + id + " belongs to dataset " + header.dataset()
          + ", which the session of " + session.username() + " may not access");
    }
  }

  /** Throws PERMISSION_DENIED unless the session may change an object of {@code header}'s dataset. */
  static void checkWrite(Session session, UUID id, ObjectHeader header) {
    check(session, id, header);
    if (!session.mayWrite(header.dataset())) {
      throw new PermissionDeniedException("object " + id + " belongs to dataset " + header.dataset()
          + ", which the session of " + session.username() + " may only read (a read-only data contract):"
          + " the change was not applied");
    }
  }

  /** Throws PERMISSION_DENIED unless the session may create objects in {@code dataset}. */
  static void checkWritable(Session session, String dataset) {
    if (!session.mayWrite(dataset)) {
      throw new PermissionDeniedException("the session of " + session.username() + " may not create or change"
          + " objects in dataset " + dataset + (session.mayAccess(dataset) ? " (a read-only data contract)" : ""));
    }
  }

  /** Throws PERMISSION_DENIED unless the caller is a backend (or the Logic Module). */
  public static void requireBackend(Session session, String operation) {
    if (!session.backend()) {
      throw new PermissionDeniedException(operation + " is for the cluster's backends only; " + session.username()
          + " is a user");
    }
  }
}
