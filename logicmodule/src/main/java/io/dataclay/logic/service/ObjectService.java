package io.dataclay.logic.service;

import io.dataclay.exceptions.AliasDoesNotExistException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.logic.metadata.MetadataStore;
import io.dataclay.logic.metadata.ObjectRecord;
import java.util.HashSet;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Object metadata and aliases. Backends register objects and record their copies (backend
 * sessions only); reading is allowed to sessions whose datasets include the object's dataset,
 * naming and un-naming to those that may also change it.
 */
public final class ObjectService {
  private static final Duration FLUSH_TIMEOUT = Duration.ofSeconds(5);

  private final MetadataStore store;
  private final AccountService accounts;
  private final BackendRegistry backends;
  private final BackendCalls calls;
  private final Supplier<String> systemToken;

  ObjectService(MetadataStore store, AccountService accounts, BackendRegistry backends, BackendCalls calls,
      Supplier<String> systemToken) {
    this.store = store;
    this.accounts = accounts;
    this.backends = backends;
    this.calls = calls;
    this.systemToken = systemToken;
  }

  /**
   * Registers objects stored by a backend and, when {@code alias} is not empty, names
   * {@code aliasObjectId} with it in that object's dataset: all or nothing, durable on return.
   * Registering the same objects again from the same master changes nothing.
   */
  public void registerObjects(Session caller, List<ObjectRecord> objects, String alias, String aliasObjectId) {
    caller.requireBackend("RegisterObjects");
    if (objects.isEmpty()) {
      throw Checks.invalid("objects", "at least one object is required");
    }
    // a batch repeats few classes, datasets and backends: each distinct value is checked once,
    // and field names for messages are only built on failure (10,000 objects is a normal batch)
    Set<String> ids = new HashSet<>();
    Set<String> classes = new HashSet<>();
    Set<String> datasets = new HashSet<>();
    Set<String> masters = new HashSet<>();
    for (int i = 0; i < objects.size(); i++) {
      ObjectRecord o = objects.get(i);
      if (!Checks.isCanonicalUuid(o.id())) {
        Checks.uuid(at(i, "id"), o.id());
      }
      if (!ids.add(o.id())) {
        throw Checks.invalid(at(i, "id"), o.id() + " appears twice");
      }
      if (classes.add(o.className())) {
        Checks.className(at(i, "class_name"), o.className());
      }
      if (datasets.add(o.dataset())) {
        Checks.name(at(i, "dataset"), o.dataset());
        accounts.requireDatasetExists(o.dataset());
      }
      if (masters.add(o.masterBackendId())) {
        backends.requireRegistered(at(i, "master_backend_id"), o.masterBackendId());
      }
      for (int r = 0; r < o.replicaBackendIds().size(); r++) {
        backends.requireRegistered(at(i, "replica_backend_ids[" + r + "]"), o.replicaBackendIds().get(r));
      }
      if (!o.aliases().isEmpty()) {
        throw Checks.invalid(at(i, "aliases"), "must be empty: an alias is registered with the request's alias field");
      }
      if (!o.versionOf().isEmpty()) {
        Checks.uuid(at(i, "version_of"), o.versionOf());
      }
    }
    boolean named = alias != null && !alias.isEmpty();
    if (named) {
      Checks.alias("alias", alias);
      Checks.uuid("alias_object_id", aliasObjectId);
    } else if (aliasObjectId != null && !aliasObjectId.isEmpty()) {
      throw Checks.invalid("alias_object_id", "given without an alias");
    }
    store.objects().register(objects, named ? alias : null, named ? aliasObjectId : null);
  }

  /**
   * The metadata of an object the caller may see. Backends register objects made persistent
   * without an alias in the background, so before answering that an object does not exist the
   * live backends are asked to flush what they have queued, and the lookup is made again.
   */
  public ObjectRecord info(Session caller, String id) {
    Checks.uuid("id", id);
    Optional<ObjectRecord> found = store.objects().find(id);
    if (found.isEmpty()) {
      calls.flushRegistrations(backends.alive(), systemToken.get(), FLUSH_TIMEOUT);
      found = store.objects().find(id);
    }
    ObjectRecord o = found.orElseThrow(() -> new ObjectDoesNotExistException("object " + id + " does not exist"));
    caller.requireDataset(o.dataset());
    return o;
  }

  /** The metadata of the object an alias names in {@code dataset} (empty: the session's dataset). */
  public ObjectRecord byAlias(Session caller, String alias, String dataset) {
    Checks.alias("alias", alias);
    String ds = datasetOf(caller, dataset);
    return store.objects().findByAlias(ds, alias)
        .orElseThrow(() -> new AliasDoesNotExistException("alias '" + alias + "' does not exist in dataset '"
            + ds + "'"));
  }

  /** Names an object the caller may change with {@code alias}, in the object's dataset. */
  public void newAlias(Session caller, String alias, String objectId) {
    Checks.alias("alias", alias);
    ObjectRecord o = info(caller, Checks.uuid("object_id", objectId));
    caller.requireWritable(o.dataset());
    store.objects().addAlias(o.dataset(), alias, o.id());
  }

  /** Removes an alias from {@code dataset} (empty: the session's dataset). */
  public void deleteAlias(Session caller, String alias, String dataset) {
    Checks.alias("alias", alias);
    String ds = datasetOf(caller, dataset);
    caller.requireWritable(ds);
    if (!store.objects().deleteAlias(ds, alias)) {
      throw new AliasDoesNotExistException("alias '" + alias + "' does not exist in dataset '" + ds + "'");
    }
  }

  /** Records replicas of objects on {@code backendId} (their master's backend only). */
  public void addReplicas(Session caller, List<String> ids, String backendId) {
    checkLocations(caller, "AddReplicas", ids, backendId);
    store.objects().addReplicas(ids, backendId, caller.backendId());
  }

  /** Records that {@code backendId} dropped its replicas of the objects (their master's backend only). */
  public void removeReplicas(Session caller, List<String> ids, String backendId) {
    checkLocations(caller, "RemoveReplicas", ids, backendId);
    store.objects().removeReplicas(ids, backendId, caller.backendId());
  }

  /** Records that the objects' master copies moved to {@code backendId} (their master's backend only). */
  public void setMaster(Session caller, List<String> ids, String backendId) {
    checkLocations(caller, "SetMaster", ids, backendId);
    store.objects().setMaster(ids, backendId, caller.backendId());
  }

  /** Forgets objects with their replicas and aliases (backends only: a retired version, a move's source). */
  public void unregister(Session caller, List<String> ids) {
    caller.requireBackend("UnregisterObjects");
    checkIds(ids);
    store.objects().removeObjects(ids);
  }

  /** Objects mastered on {@code backendId} that have replicas (backends only, at start). */
  public List<ObjectRecord> replicatedFrom(Session caller, String backendId) {
    caller.requireBackend("GetReplicatedObjects");
    backends.requireRegistered("backend_id", Checks.uuid("backend_id", backendId));
    return store.objects().replicatedFrom(backendId);
  }

  private void checkLocations(Session caller, String rpc, List<String> ids, String backendId) {
    caller.requireBackend(rpc);
    checkIds(ids);
    backends.requireRegistered("backend_id", Checks.uuid("backend_id", backendId));
  }

  private static void checkIds(List<String> ids) {
    if (ids.isEmpty()) {
      throw Checks.invalid("object_ids", "at least one object ID is required");
    }
    for (int i = 0; i < ids.size(); i++) {
      Checks.uuid("object_ids[" + i + "]", ids.get(i));
    }
  }

  long objectCount() {
    return store.objects().countObjects();
  }

  long aliasCount() {
    return store.objects().countAliases();
  }

  private static String at(int index, String field) {
    return "objects[" + index + "]." + field;
  }

  private static String datasetOf(Session caller, String dataset) {
    String ds = dataset == null || dataset.isEmpty() ? caller.dataset() : Checks.name("dataset", dataset);
    caller.requireDataset(ds);
    return ds;
  }
}
