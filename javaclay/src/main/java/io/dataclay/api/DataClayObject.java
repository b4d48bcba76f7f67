package io.dataclay.api;

import io.dataclay.exceptions.ObjectNotPersistentException;
import java.util.List;
import java.util.UUID;

/**
 * Base of every model class. Its persistent state is its non-static, non-transient fields; once
 * the object is persistent, its methods (enhanced at build time by {@link io.dataclay.enhance.DataClayPlugin})
 * run in the backend that holds it, so a getter or setter reads or writes the stored field.
 */
public abstract class DataClayObject {
  // Read by ObjectStates; transient, and declared here, so never part of the persistent state.
  transient volatile ObjectState dcState;

  /** The persistent object's ID, or null while this object is not persistent. */
  public final UUID getID() {
    ObjectState s = dcState;
    return s == null ? null : s.id();
  }

  /** Whether this object is persistent. */
  public final boolean isPersistent() {
    return dcState != null;
  }

  /** Stores this object and the objects it reaches in a backend chosen at random; durable when it returns. */
  public final void makePersistent() {
    makePersistent(null, null, true);
  }

  /** Stores this object under {@code alias} (unique in the session's dataset); durable when it returns. */
  public final void makePersistent(String alias) {
    makePersistent(alias, null, true);
  }

  /** Stores this object in backend {@code backendId}; durable when it returns. */
  public final void makePersistent(UUID backendId) {
    makePersistent(null, backendId, true);
  }

  /** Stores this object under {@code alias} (may be null) in {@code backendId} (null: any); durable when it returns. */
  public final void makePersistent(String alias, UUID backendId) {
    makePersistent(alias, backendId, true);
  }

  /**
   * Stores this object under {@code alias} (may be null) in {@code backendId} (null: any live
   * backend); with {@code recursive} the volatile model objects it reaches are stored with it,
   * without it reaching one fails. An object already persistent only gets the alias. Durable
   * (and the alias registered) when it returns.
   */
  public final void makePersistent(String alias, UUID backendId, boolean recursive) {
    Runtimes.current().makePersistent(this, alias, backendId, recursive);
  }

  /** The backend holding this object's master copy. */
  public final UUID getLocation() {
    return Runtimes.current().getLocation(persistent());
  }

  /** Every backend holding a copy of this object, master first. */
  public final List<UUID> getAllLocations() {
    return Runtimes.current().getAllLocations(persistent());
  }

  /** The object with {@code alias} in the session's dataset, checked to be a {@code type}. */
  public static <T extends DataClayObject> T getByAlias(Class<T> type, String alias) {
    return Runtimes.current().getByAlias(type, alias, null);
  }

  /** The object with {@code alias} in {@code dataset}, checked to be a {@code type}. */
  public static <T extends DataClayObject> T getByAlias(Class<T> type, String alias, String dataset) {
    return Runtimes.current().getByAlias(type, alias, dataset);
  }

  /** Removes {@code alias} from the session's dataset (the object stays). */
  public static void deleteAlias(String alias) {
    Runtimes.current().deleteAlias(alias, null);
  }

  /** Removes {@code alias} from {@code dataset} (the object stays). */
  public static void deleteAlias(String alias, String dataset) {
    Runtimes.current().deleteAlias(alias, dataset);
  }

  private DataClayObject persistent() {
    if (dcState == null) {
      throw new ObjectNotPersistentException(
          "this " + getClass().getName() + " is not persistent: call makePersistent() first");
    }
    return this;
  }
}
