package io.dataclay.ds.replication;

import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.ObjectDelta;
import java.util.List;
import java.util.UUID;

/**
 * Other Data Services, called with this backend's own session, except where a caller's session is
 * passed on (so that the other backend checks that caller's permissions). Failures surface as
 * DataClayExceptions (BACKEND_UNAVAILABLE when a backend cannot be reached).
 */
public interface PeerBackends {
  /** Stores copies on {@code backendId}; returns the bytes sent. */
  long storeCopies(String backendId, List<ObjectCopy> copies);

  /** Applies deltas to the copies on {@code backendId} (a master passes them on to its replicas). */
  void applyDeltas(String backendId, List<ObjectDelta> deltas);

  /**
   * Whether a call that failed with BACKEND_UNAVAILABLE after {@code nanos} failed because its
   * backend stayed silent for the unreachable time (unreachable, frozen or gone) rather than
   * refusing or restarting: such a backend is not asked again at once.
   */
  boolean wentSilent(long nanos);

  /** Gives objects on {@code backendId} new whole states: fields a state lacks are removed there. */
  void replaceStates(String backendId, List<ObjectDelta> states);

  /** Removes objects from {@code backendId}. */
  void deleteObjects(String backendId, List<UUID> ids);

  /**
   * Asks the master {@code backendId}, on behalf of {@code caller}, to replicate objects to
   * {@code target}; returns the copies made and bytes sent.
   */
  CopyResult newReplica(Session caller, String backendId, List<UUID> ids, String target, boolean recursive);

  /**
   * Asks the master {@code backendId}, on behalf of {@code caller}, to move objects to
   * {@code target}; returns the objects moved and bytes sent.
   */
  CopyResult move(Session caller, String backendId, List<UUID> ids, String target, boolean recursive);
}
