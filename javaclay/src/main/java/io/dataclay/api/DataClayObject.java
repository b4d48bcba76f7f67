package io.dataclay.api;

import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.ObjectNotPersistentException;
import java.util.List;
import java.util.UUID;
import storage.StubItf;

/**
 * Base of every model class. Its persistent state is its non-static, non-transient fields; once
 * the object is persistent, its methods (enhanced at build time by {@link io.dataclay.enhance.DataClayPlugin})
 * run in the backend that holds it, so a getter or setter reads or writes the stored field.
 */
public abstract class DataClayObject implements StubItf {
  // Read by ObjectStates; transient, and declared here, so never part of the persistent state.
  transient volatile ObjectState dcState;

  /** The persistent object's ID, or null while this object is not persistent. */
  public final UUID getObjectId() {
    ObjectState s = dcState;
    return s == null ? null : s.id();
  }

  /** The persistent object's ID as text (COMPSs' {@link StubItf#getID}), or null while it is not persistent. */
  @Override
  public final String getID() {
    ObjectState s = dcState;
    return s == null ? null : s.id().toString();
  }

  /**
   * Removes every alias of this object (COMPSs' {@link StubItf#deletePersistent}): once nothing
   * else reaches it and no open session holds it, garbage collection removes the object itself.
   */
  @Override
  public final void deletePersistent() {
    DataClayObject self = persistent();
    Runtimes.current().deleteAliases(self);
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
  @Override
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

  /**
   * One of the backends holding a copy of this object, chosen at random among those that can be
   * reached (the white paper's definition; the master is {@code getAllLocations().get(0)}).
   * Reflects moves and replicas.
   */
  public final UUID getLocation() {
    DataClayObject self = persistent();
    return Runtimes.current().getLocation(self);
  }

  /** Every backend holding a copy of this object, master first. */
  public final List<UUID> getAllLocations() {
    DataClayObject self = persistent();
    return Runtimes.current().getAllLocations(self);
  }

  /** Copies this object and what it references to a live backend without a copy; returns that backend. */
  public final UUID newReplica() {
    return newReplica(null, true);
  }

  /** Copies this object and what it references to {@code backendId} (null: any); returns that backend. */
  public final UUID newReplica(UUID backendId) {
    return newReplica(backendId, true);
  }

  /**
   * Copies this object (with {@code recursive}, also the objects it references, transitively) to
   * {@code backendId} (null: a live backend that has no copy yet) and returns the backend the copy
   * is on. Its master copy passes every later change on to the copy before the change returns;
   * when the master's backend is down, reads are served by a copy. A no-op on a backend that
   * already holds a copy.
   */
  public final UUID newReplica(UUID backendId, boolean recursive) {
    DataClayObject self = persistent();
    return Runtimes.current().newReplica(self, backendId, recursive);
  }

  /** A version of this object next to it: a new object (own ID) of the same class holding a copy of its state. */
  public final <T extends DataClayObject> T newVersion() {
    return newVersion(null);
  }

  /**
   * A version of this object stored on {@code backendId} (null: next to the object): a new
   * object, with its own ID and of the same class, holding a copy of this object's state. Changing
   * it leaves this object untouched until {@link #consolidateVersion()} is called on it.
   */
  @SuppressWarnings("unchecked")
  public final <T extends DataClayObject> T newVersion(UUID backendId) {
    DataClayObject self = persistent();
    return (T) Runtimes.current().newVersion(self, backendId);
  }

  /**
   * On a version: the object it versions (the original, also for a version of a version) gets
   * this version's state, and this version is retired (using it afterwards fails with
   * ObjectDoesNotExistException). NotAVersionException when this object is not a version.
   */
  public final void consolidateVersion() {
    DataClayObject self = persistent();
    Runtimes.current().consolidateVersion(self);
  }

  /** Moves this object (only this one) to {@code backendId}; its ID, aliases and references stay valid. */
  public final void move(UUID backendId) {
    move(backendId, false);
  }

  /**
   * Moves this object (with {@code recursive}, also the objects it references, transitively) to
   * {@code backendId}, which must be given; its ID, aliases and references stay valid.
   */
  public final void move(UUID backendId, boolean recursive) {
    if (backendId == null) {
      throw new InvalidArgumentException("backendId is null: move needs the backend to move the object to");
    }
    DataClayObject self = persistent();
    Runtimes.current().move(self, backendId, recursive);
  }

  /** The object with {@code alias} in the session's dataset, checked to be a {@code type}. */
  public static <T extends DataClayObject> T getByAlias(Class<T> type, String alias) {
    return Runtimes.current().getByAlias(type, alias, null);
  }

  /** The object with {@code alias} in {@code dataset}, checked to be a {@code type}. */
  public static <T extends DataClayObject> T getByAlias(Class<T> type, String alias, String dataset) {
    return Runtimes.current().getByAlias(type, alias, dataset);
  }

  /**
   * The object with {@code alias} in the session's dataset, called on a model class:
   * {@code Person p = Person.getByAlias("alice")}. The build plugin gives every model class its
   * own version of this method; called anywhere else it fails with a clear error.
   */
  public static <T extends DataClayObject> T getByAlias(String alias) {
    throw new InvalidArgumentException("getByAlias(\"" + alias + "\") must be called on a model class enhanced by"
        + " the dataClay build plugin (Person.getByAlias(alias)); else use DataClayObject.getByAlias(Person.class, alias)");
  }

  /** The object with {@code alias} in {@code dataset}, called on a model class (see {@link #getByAlias(String)}). */
  public static <T extends DataClayObject> T getByAlias(String alias, String dataset) {
    throw new InvalidArgumentException("getByAlias(\"" + alias + "\", \"" + dataset + "\") must be called on a model"
        + " class enhanced by the dataClay build plugin; else use DataClayObject.getByAlias(Person.class, alias, dataset)");
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
