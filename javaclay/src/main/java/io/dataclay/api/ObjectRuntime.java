package io.dataclay.api;

import io.dataclay.exceptions.PermissionDeniedException;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * What model objects delegate to: the client runtime opened by {@link DataClay#init()}, or the
 * runtime of a backend's Java execution environment while it runs a method.
 */
public interface ObjectRuntime {
  /** Runs {@code method} (name and JVM descriptor, e.g. "add(I)V") on the persistent object and returns its result. */
  Object callMethod(DataClayObject target, String method, Object[] args);

  /** The value of persistent field {@code field} of a persistent object, read where the object is. */
  Object getField(DataClayObject target, String field);

  /** Assigns persistent field {@code field} of a persistent object where the object is; durable when it returns. */
  void setField(DataClayObject target, String field, Object value);

  /** Stores {@code obj} (and, if {@code recursive}, the volatile objects it reaches); durable when it returns. */
  void makePersistent(DataClayObject obj, String alias, UUID backendId, boolean recursive);

  /** The object with an alias in {@code dataset} (null: the session's), checked to be a {@code type}. */
  <T extends DataClayObject> T getByAlias(Class<T> type, String alias, String dataset);

  /** Removes an alias (the object stays). */
  void deleteAlias(String alias, String dataset);

  /** Removes every alias of a persistent object (the object stays until collected). */
  void deleteAliases(DataClayObject obj);

  /** One of the backends holding a copy of a persistent object, at random among those reachable. */
  UUID getLocation(DataClayObject obj);

  /** Every backend holding a copy, master first. */
  List<UUID> getAllLocations(DataClayObject obj);

  /** The live and registered backends by ID. */
  Map<UUID, BackendInfo> getBackends();

  /**
   * Copies a persistent object (with {@code recursive}, also what it references, transitively) to
   * {@code backendId} (null: a live backend without a copy); returns the backend the copy is on.
   */
  UUID newReplica(DataClayObject obj, UUID backendId, boolean recursive);

  /** A version of a persistent object, stored on {@code backendId} (null: next to the object). */
  <T extends DataClayObject> T newVersion(T obj, UUID backendId);

  /** Gives a version's state to the object it versions and retires the version. */
  void consolidateVersion(DataClayObject version);

  /** Moves a persistent object (with {@code recursive}, also what it references) to {@code backendId}. */
  void move(DataClayObject obj, UUID backendId, boolean recursive);

  /** The persistent object with this ID (a proxy of its class). */
  DataClayObject getByID(UUID id);

  /** The datasets the session may see, a page at a time (clients only: model code cannot list). */
  default Stream<DatasetInfo> listDatasets(boolean countObjects) {
    throw notFromHere("listDatasets");
  }

  /** The aliases matching a glob pattern in {@code dataset} (null: every one the session may see). */
  default Stream<AliasInfo> listAliases(String pattern, String dataset) {
    throw notFromHere("listAliases");
  }

  /** The objects of a class (null: every class) in {@code dataset} (null: every one the session may see). */
  default Stream<StoredObject> listObjects(String className, String dataset) {
    throw notFromHere("listObjects");
  }

  private static PermissionDeniedException notFromHere(String operation) {
    return new PermissionDeniedException(operation + " lists what a client session may see: call it from a client"
        + " program, not from model code running in a backend");
  }
}
