package io.dataclay.ds.registration;

import io.dataclay.ds.store.StoredObject;
import java.util.List;
import java.util.UUID;

/**
 * The Logic Module's record of where copies live, as replicas, versions and moves change it.
 * Every call is synchronous: when it returns, the Logic Module has recorded the change.
 */
public interface ObjectDirectory extends ObjectLocator {
  /** The IDs of the backends that are registered and alive. */
  List<String> liveBackends();

  /** Registers new objects (versions) whose master copy is on {@code masterBackendId}. */
  void registerOn(List<StoredObject> objects, String masterBackendId);

  /** Records replicas of the objects on {@code backendId}. */
  void addReplicas(List<UUID> ids, String backendId);

  /** Records that {@code backendId} no longer holds replicas of the objects. */
  void removeReplicas(List<UUID> ids, String backendId);

  /** Records that the objects' master copies are now on {@code backendId}. */
  void setMaster(List<UUID> ids, String backendId);

  /** Forgets objects, their replicas and aliases. */
  void unregister(List<UUID> ids);

  /** Objects mastered on {@code backendId} that have replicas. */
  List<ObjectLocation> replicatedFrom(String backendId);
}
