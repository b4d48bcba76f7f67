package io.dataclay.ds.session;

import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.exceptions.ObjectNotHereException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.util.UUID;

/**
 * The access rules of a Data Service: a session reads objects of its datasets only (the others
 * are answered as absent), changes or copies those it may write only, and only backends call what
 * backends send each other.
 */
public final class Permissions {
  private Permissions() {}

  /**
   * Throws OBJECT_NOT_HERE, worded as for an object this backend does not store, unless the session
   * may read an object of {@code header}'s dataset. An object the session may not read is answered
   * as absent so that its ID does not tell that it exists, nor which dataset holds it (the client's
   * router then asks the Logic Module, which answers OBJECT_DOES_NOT_EXIST alike).
   */
  public static void check(Session session, UUID id, ObjectHeader header) {
    if (!mayRead(session, header)) {
      throw notStoredHere(id);
    }
  }

  /** Whether the session may read an object of {@code header}'s dataset. */
  public static boolean mayRead(Session session, ObjectHeader header) {
    return session.mayAccess(header.dataset());
  }

  /** What a backend answers for an object it does not store, or stores for another dataset than the caller's. */
  public static ObjectNotHereException notStoredHere(UUID id) {
    return new ObjectNotHereException("object " + id + " is not stored on this backend");
  }

  /**
   * Throws as {@link #check} when the session may not read the object, and PERMISSION_DENIED when it
   * may read but not change it (a read-only data contract).
   */
  public static void checkWrite(Session session, UUID id, ObjectHeader header) {
    check(session, id, header);
    if (!session.mayWrite(header.dataset())) {
      throw new PermissionDeniedException("object " + id + " belongs to dataset " + header.dataset()
          + ", which the session of " + session.username() + " may only read (a read-only data contract):"
          + " the change was not applied");
    }
  }

  /** Throws PERMISSION_DENIED unless the session may create objects in {@code dataset}. */
  public static void checkWritable(Session session, String dataset) {
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
