package io.dataclay.logic.objects;

import io.dataclay.exceptions.AliasDoesNotExistException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.logic.accounts.AccountService;
import io.dataclay.logic.accounts.CallerSession;
import io.dataclay.logic.backends.BackendRegistry;
import io.dataclay.logic.checks.Checks;
import io.dataclay.logic.metadata.MetadataStore;
import io.dataclay.logic.metadata.ObjectGroup;
import io.dataclay.logic.metadata.ObjectRecord;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Object metadata and aliases. Backends register objects and record their copies (backend
 * sessions only); reading is allowed to sessions whose datasets include the object's dataset,
 * naming and un-naming to those that may also change it.
 */
public final class ObjectMetadataService {
  private final MetadataStore store;
  private final AccountService accounts;
  private final BackendRegistry backends;

  /** Object metadata in {@code store}, for the accounts and backends given. */
  public ObjectMetadataService(MetadataStore store, AccountService accounts, BackendRegistry backends) {
    this.store = store;
    this.accounts = accounts;
    this.backends = backends;
  }

  /**
   * Registers groups of objects stored by backends (backend sessions only), in one transaction:
   * each group all or nothing with its alias, whatever happens to the others, durable on return.
   * One outcome per group, in order: empty when registered, else why it was refused, a malformed
   * group included (INVALID_ARGUMENT naming {@code groups[i]}'s field). Registering the same
   * objects again from the same master changes nothing.
   */
  public List<Optional<DataClayException>> registerObjects(CallerSession caller, List<ObjectGroup> groups) {
    caller.requireBackend("RegisterObjects");
    if (groups.isEmpty()) {
      throw Checks.invalid("groups", "at least one group is required");
    }
    // a request carries few classes, datasets and backends: each distinct value is checked once,
    // and field names for messages are only built on failure (10,000 objects is a normal request)
    GroupChecks checks = new GroupChecks();
    List<Optional<DataClayException>> outcomes = new ArrayList<>(groups.size());
    List<ObjectGroup> valid = new ArrayList<>(groups.size());
    for (int g = 0; g < groups.size(); g++) {
      try {
        checks.check(groups.get(g), "groups[" + g + "].");
        valid.add(groups.get(g));
        outcomes.add(Optional.empty());
      } catch (DataClayException refused) {
        outcomes.add(Optional.of(refused));
      }
    }
    Iterator<Optional<DataClayException>> registered = store.objects().register(valid).iterator();
    for (int g = 0; g < outcomes.size(); g++) {
      if (outcomes.get(g).isEmpty()) {
        outcomes.set(g, registered.next());
      }
    }
    return outcomes;
  }

  /**
   * The metadata of an object the caller may see. An object of a dataset the caller may not read
   * gets the very answer of an unknown ID, so that IDs tell nothing about other datasets. An
   * administrator sees every object's metadata, as its listings do (ListObjects, ListAliases): the
   * dashboard's search finds any object; reading or calling it still needs access to its dataset.
   */
  public ObjectRecord info(CallerSession caller, String id) {
    Checks.uuid("id", id);
    return store.objects().find(id).filter(o -> caller.admin() || caller.mayUse(o.dataset()))
        .orElseThrow(() -> new ObjectDoesNotExistException("object " + id + " does not exist"));
  }

  /** The metadata of the object an alias names in {@code dataset} (empty: the session's dataset). */
  public ObjectRecord byAlias(CallerSession caller, String alias, String dataset) {
    Checks.alias("alias", alias);
    String ds = datasetOf(caller, dataset);
    return store.objects().findByAlias(ds, alias)
        .orElseThrow(() -> aliasDoesNotExist(alias, dataset, ds));
  }

  /** Names an object the caller may change with {@code alias}, in the object's dataset. */
  public void newAlias(CallerSession caller, String alias, String objectId) {
    Checks.alias("alias", alias);
    ObjectRecord o = info(caller, Checks.uuid("object_id", objectId));
    caller.requireWritable(o.dataset());
    store.objects().addAlias(o.dataset(), alias, o.id());
  }

  /** Removes an alias from {@code dataset} (empty: the session's dataset). */
  public void deleteAlias(CallerSession caller, String alias, String dataset) {
    Checks.alias("alias", alias);
    String ds = datasetOf(caller, dataset);
    caller.requireWritable(ds);
    if (!store.objects().deleteAlias(ds, alias)) {
      throw aliasDoesNotExist(alias, dataset, ds);
    }
  }

  /**
   * In dataClay 4's words, which its programs match on: "Alias &lt;dataset&gt;/&lt;alias&gt; does not
   * exist", where the dataset is None when the caller named none; the dataset searched is said after.
   */
  private static AliasDoesNotExistException aliasDoesNotExist(String alias, String named, String searched) {
    String given = named == null || named.isEmpty() ? "None" : named;
    return new AliasDoesNotExistException("Alias " + given + "/" + alias + " does not exist"
        + (given.equals(searched) ? "" : " (searched the session's dataset '" + searched + "')"));
  }

  /** Records replicas of objects on {@code backendId} (their master's backend only). */
  public void addReplicas(CallerSession caller, List<String> ids, String backendId) {
    checkLocations(caller, "AddReplicas", ids, backendId);
    store.objects().addReplicas(ids, backendId, caller.backendId());
  }

  /** Records that {@code backendId} dropped its replicas of the objects (their master's backend only). */
  public void removeReplicas(CallerSession caller, List<String> ids, String backendId) {
    checkLocations(caller, "RemoveReplicas", ids, backendId);
    store.objects().removeReplicas(ids, backendId, caller.backendId());
  }

  /** Records that the objects' master copies moved to {@code backendId} (their master's backend only). */
  public void setMaster(CallerSession caller, List<String> ids, String backendId) {
    checkLocations(caller, "SetMaster", ids, backendId);
    store.objects().setMaster(ids, backendId, caller.backendId());
  }

  /** Forgets objects with their replicas and aliases (backends only: a retired version, a move's source). */
  public void unregister(CallerSession caller, List<String> ids) {
    caller.requireBackend("UnregisterObjects");
    checkIds(ids);
    store.objects().removeObjects(ids);
  }

  /** Objects mastered on {@code backendId} that have replicas (backends only, at start). */
  public List<ObjectRecord> replicatedFrom(CallerSession caller, String backendId) {
    caller.requireBackend("GetReplicatedObjects");
    backends.requireRegistered("backend_id", Checks.uuid("backend_id", backendId));
    return store.objects().replicatedFrom(backendId);
  }

  private void checkLocations(CallerSession caller, String rpc, List<String> ids, String backendId) {
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

  /** The checks of one request's groups, each distinct class, dataset and backend checked once. */
  private final class GroupChecks {
    private final Set<String> classes = new HashSet<>();
    private final Set<String> datasets = new HashSet<>();
    private final Set<String> masters = new HashSet<>();

    /** Throws why the group is malformed or names a dataset or backend that does not exist. */
    void check(ObjectGroup group, String at) {
      List<ObjectRecord> objects = group.objects();
      if (objects.isEmpty()) {
        throw Checks.invalid(at + "objects", "at least one object is required");
      }
      Set<String> ids = new HashSet<>();
      for (int i = 0; i < objects.size(); i++) {
        ObjectRecord o = objects.get(i);
        if (!Checks.isCanonicalUuid(o.id())) {
          Checks.uuid(field(at, i, "id"), o.id());
        }
        if (!ids.add(o.id())) {
          throw Checks.invalid(field(at, i, "id"), o.id() + " appears twice");
        }
        if (!classes.contains(o.className())) {
          Checks.className(field(at, i, "class_name"), o.className());
          classes.add(o.className());
        }
        if (!datasets.contains(o.dataset())) {
          Checks.name(field(at, i, "dataset"), o.dataset());
          accounts.requireDatasetExists(o.dataset());
          datasets.add(o.dataset());
        }
        if (!masters.contains(o.masterBackendId())) {
          backends.requireRegistered(field(at, i, "master_backend_id"), o.masterBackendId());
          masters.add(o.masterBackendId());
        }
        for (int r = 0; r < o.replicaBackendIds().size(); r++) {
          backends.requireRegistered(field(at, i, "replica_backend_ids[" + r + "]"), o.replicaBackendIds().get(r));
        }
        if (!o.aliases().isEmpty()) {
          throw Checks.invalid(field(at, i, "aliases"), "must be empty: an alias is registered with the group's"
              + " alias field");
        }
        if (!o.versionOf().isEmpty()) {
          Checks.uuid(field(at, i, "version_of"), o.versionOf());
        }
      }
      if (group.alias() != null) {
        Checks.alias(at + "alias", group.alias());
        Checks.uuid(at + "alias_object_id", group.aliasObjectId());
      } else if (group.aliasObjectId() != null) {
        throw Checks.invalid(at + "alias_object_id", "given without an alias");
      }
    }
  }

  private static String field(String group, int index, String name) {
    return group + "objects[" + index + "]." + name;
  }

  /** How many objects are registered. */
  public long objectCount() {
    return store.objects().countObjects();
  }

  /** How many aliases exist. */
  public long aliasCount() {
    return store.objects().countAliases();
  }

  private static String datasetOf(CallerSession caller, String dataset) {
    String ds = dataset == null || dataset.isEmpty() ? caller.dataset() : Checks.name("dataset", dataset);
    caller.requireDataset(ds);
    return ds;
  }
}
