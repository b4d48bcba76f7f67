package io.dataclay.ds.replication;

import io.dataclay.ds.collection.ReferenceRecorder;
import io.dataclay.ds.registration.LogicModuleGateway;
import io.dataclay.ds.registration.ObjectDirectory;
import io.dataclay.ds.session.Permissions;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.BackendDoesNotExistException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.NotAVersionException;
import io.dataclay.exceptions.ObjectNotHereException;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.logging.Logger;

/**
 * Versions (how COMPSs renames data): a version is a new object holding a copy of another's
 * state; consolidating it gives that state to the original and retires the version. A version
 * of a version names the same original, so any of them consolidates into it.
 */
public final class VersionService {
  private static final Logger LOG = Logger.getLogger(VersionService.class.getName());

  /** A new version, where it lives and the bytes sent to put it there. */
  public record NewVersion(StoredObject version, String backendId, long bytesSent) {}

  private final ObjectStore store;
  private final CopyService copies;
  private final ReplicaSets replicas;
  private final PeerBackends peers;
  private final ObjectDirectory directory;
  private final LogicModuleGateway registrations;
  private final ReferenceRecorder recorder;
  private final String self;

  /** The service of backend {@code self}; the sessions that make versions hold them in {@code recorder}. */
  public VersionService(ObjectStore store, CopyService copies, ReplicaSets replicas, PeerBackends peers,
      ObjectDirectory directory, LogicModuleGateway registrations, ReferenceRecorder recorder, UUID self) {
    this.store = store;
    this.copies = copies;
    this.replicas = replicas;
    this.peers = peers;
    this.directory = directory;
    this.registrations = registrations;
    this.recorder = recorder;
    this.self = self.toString();
  }

  /**
   * Makes a version of an object mastered here, stored here or on {@code target}; registered when
   * it returns. A version is a new object of the original's dataset: the session must be allowed
   * to change that dataset. Like any object it is garbage-collected once nothing reaches it: the
   * session that made it holds it (until it closes), and while it is kept it keeps its original.
   */
  public NewVersion newVersion(Session session, UUID id, String target) {
    StoredObject original = masterHere(session, id);
    Permissions.checkWrite(session, id, original.header());
    ObjectHeader h = original.header();
    String root = h.versionOf() != null ? h.versionOf() : id.toString();
    StoredObject version = new StoredObject(UUID.randomUUID(),
        new ObjectHeader(h.className(), h.language(), h.dataset(), root, null), original.fields());
    // Held before it exists anywhere, so no collection can find it unheld (the holding is reported by
    // this backend's EndCollection, whichever backend stores the version).
    recorder.held(session, List.of(version.id()));
    if (target == null || target.equals(self)) {
      store.put(version);
      // Crash note: stored here and not yet registered, the version is re-registered at the next start.
      try {
        registrations.registerObjects(List.of(version), null, null);
      } catch (RuntimeException refused) {
        store.remove(version.id());
        throw refused;
      }
      return new NewVersion(version, self, 0);
    }
    if (!directory.liveBackends().contains(target)) {
      throw new BackendDoesNotExistException("backend_id: no live backend " + target + " is registered");
    }
    long bytes = peers.storeCopies(target, List.of(new ObjectCopy(version, Set.of())));
    // Crash note: a version stored there but not yet registered is unacknowledged garbage there
    // (registered again only if that backend stops uncleanly).
    try {
      directory.registerOn(List.of(version), target);
    } catch (RuntimeException refused) {
      try {
        peers.deleteObjects(target, List.of(version.id()));
      } catch (DataClayException e) {
        LOG.warning("could not remove unregistered version " + version.id() + " from backend " + target
            + " (it stays there, never read): " + e.getMessage());
      }
      throw refused;
    }
    return new NewVersion(version, target, bytes);
  }

  /**
   * Gives the state of a version held here to its original (on the original's master,
   * which passes it on to its replicas), then unregisters and removes the version everywhere.
   * Consolidating again after a crash in between gives the same state again. The session must be
   * allowed to change both the version and the original, and they must be of the same class.
   */
  public void consolidate(Session session, UUID versionId) {
    StoredObject version = masterHere(session, versionId);
    Permissions.checkWrite(session, versionId, version.header());
    String root = version.header().versionOf();
    if (root == null) {
      throw new NotAVersionException("object " + versionId + " is not a version! consolidate_version() applies"
          + " to objects made by new_version()");
    }
    UUID original = UUID.fromString(root);
    Optional<ObjectHeader> local = store.header(original).filter(x -> x.masterBackendId() == null);
    ObjectHeader target = local.orElseGet(() -> directory.locate(original).header());
    Permissions.checkWrite(session, original, target);
    ObjectHeader v = version.header();
    if (!v.className().equals(target.className()) || v.language() != target.language()) {
      throw new InvalidArgumentException("version " + versionId + " is a " + v.className() + " (" + v.language()
          + ") but its original " + original + " is a " + target.className() + " (" + target.language()
          + "): nothing was consolidated");
    }
    // The original's fields become the version's; those the version lacks are removed, where the original is.
    ObjectDelta state = new ObjectDelta(original, version.fields(), Set.of());
    if (local.isPresent()) {
      copies.replaceHere(List.of(state));
    } else {
      peers.replaceStates(directory.locate(original).masterBackendId(), List.of(state));
    }
    Set<String> versionReplicas = replicas.of(versionId);
    directory.unregister(List.of(versionId));
    copies.removeHere(List.of(versionId));
    for (String backend : versionReplicas) {
      try {
        peers.deleteObjects(backend, List.of(versionId));
      } catch (DataClayException e) {
        LOG.warning("could not remove the replica of retired version " + versionId + " on backend " + backend
            + " (it stays there unregistered, never read): " + e.getMessage());
      }
    }
  }

  private StoredObject masterHere(Session session, UUID id) {
    // an object the session may not read is answered as one whose master copy is elsewhere (no ID oracle)
    return store.get(id).filter(x -> x.header().masterBackendId() == null && Permissions.mayRead(session, x.header()))
        .orElseThrow(() -> new ObjectNotHereException("the master copy of object " + id + " is not on this backend"));
  }
}
