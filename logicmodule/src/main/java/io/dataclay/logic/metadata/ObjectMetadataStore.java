package io.dataclay.logic.metadata;

import io.dataclay.common.Language;
import io.dataclay.exceptions.AliasAlreadyExistsException;
import io.dataclay.exceptions.ObjectAlreadyExistsException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Object metadata (class, dataset, master, replicas, version link) and the aliases naming objects. */
public final class ObjectMetadataStore {
  private static final String INSERT_OBJECT = "INSERT INTO objects (id, class_name, language, dataset,"
      + " master_backend_id, version_of) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING";

  private final Jdbc jdbc;

  ObjectMetadataStore(Jdbc jdbc) {
    this.jdbc = jdbc;
  }

  /**
   * Registers objects and, when {@code alias} is not null, gives it to {@code aliasObjectId} (one
   * of {@code objects} or an already registered object) in its dataset: all in one transaction,
   * durable when this returns. Registering an object again with the same master changes nothing.
   *
   * @throws AliasAlreadyExistsException when the alias names another object; nothing is registered
   * @throws ObjectAlreadyExistsException when an object ID is registered with another master
   * @throws ObjectDoesNotExistException when {@code aliasObjectId} is neither given nor registered
   */
  public void register(List<ObjectRecord> objects, String alias, String aliasObjectId) {
    jdbc.transaction(c -> {
      insertObjects(c, objects);
      insertReplicas(c, objects);
      if (alias != null) {
        String dataset = null;
        for (ObjectRecord o : objects) {
          if (o.id().equals(aliasObjectId)) {
            dataset = o.dataset();
          }
        }
        if (dataset == null) {
          dataset = datasetOf(c, aliasObjectId).orElseThrow(() -> new ObjectDoesNotExistException(
              "alias_object_id: object " + aliasObjectId + " is neither in the request nor registered"));
        }
        insertAlias(c, dataset, alias, aliasObjectId);
      }
      return null;
    });
  }

  /** The object's metadata with its replicas and aliases, if registered. */
  public Optional<ObjectRecord> find(String id) {
    return jdbc.transaction(c -> load(c, id));
  }

  /** The metadata of the object an alias of a dataset names, if any. */
  public Optional<ObjectRecord> findByAlias(String dataset, String alias) {
    return jdbc.transaction(c -> {
      Optional<String> id = c.queryOne("SELECT object_id FROM aliases WHERE dataset = ? AND alias = ?",
          rs -> rs.getString(1), dataset, alias);
      return id.isEmpty() ? Optional.<ObjectRecord>empty() : load(c, id.get());
    });
  }

  /**
   * Names a registered object {@code alias} in {@code dataset}; naming it the same again changes nothing.
   *
   * @throws AliasAlreadyExistsException when the alias names another object
   */
  public void addAlias(String dataset, String alias, String objectId) {
    jdbc.transaction(c -> {
      insertAlias(c, dataset, alias, objectId);
      return null;
    });
  }

  /** Removes an alias; false when the dataset has no such alias. */
  public boolean deleteAlias(String dataset, String alias) {
    return jdbc.transaction(c -> c.update("DELETE FROM aliases WHERE dataset = ? AND alias = ?",
        dataset, alias)) > 0;
  }

  /** Number of registered objects. */
  public long countObjects() {
    return jdbc.transaction(c -> c.queryLong("SELECT COUNT(*) FROM objects"));
  }

  /** Number of aliases in every dataset. */
  public long countAliases() {
    return jdbc.transaction(c -> c.queryLong("SELECT COUNT(*) FROM aliases"));
  }

  private static void insertObjects(PooledConnection c, List<ObjectRecord> objects) throws SQLException {
    List<Object[]> rows = new ArrayList<>(objects.size());
    for (ObjectRecord o : objects) {
      rows.add(objectRow(o));
    }
    int[] counts = c.batch(INSERT_OBJECT, rows);
    for (int i = 0; i < objects.size(); i++) {
      if (counts[i] == 1) {
        continue;
      }
      // not inserted (or the driver did not say): only the same object from the same master is fine
      ObjectRecord o = objects.get(i);
      Optional<String> master = c.claim(INSERT_OBJECT, objectRow(o),
          "SELECT master_backend_id FROM objects WHERE id = ?", o.id());
      if (master.isPresent() && !master.get().equals(o.masterBackendId())) {
        throw new ObjectAlreadyExistsException("object " + o.id() + " is already registered with master backend "
            + master.get());
      }
    }
  }

  private static Object[] objectRow(ObjectRecord o) {
    return new Object[] {o.id(), o.className(), o.language().name(), o.dataset(), o.masterBackendId(),
        o.versionOf().isEmpty() ? null : o.versionOf()};
  }

  private static void insertReplicas(PooledConnection c, List<ObjectRecord> objects) throws SQLException {
    List<Object[]> rows = new ArrayList<>();
    for (ObjectRecord o : objects) {
      for (String backend : o.replicaBackendIds()) {
        rows.add(new Object[] {o.id(), backend});
      }
    }
    c.batch("INSERT INTO object_replicas (object_id, backend_id) VALUES (?, ?) ON CONFLICT DO NOTHING", rows);
  }

  private static void insertAlias(PooledConnection c, String dataset, String alias, String objectId)
      throws SQLException {
    // the (dataset, alias) primary key decides between concurrent writers: exactly one insert wins
    Optional<String> holder = c.claim("INSERT INTO aliases (dataset, alias, object_id) VALUES (?, ?, ?)"
            + " ON CONFLICT DO NOTHING", new Object[] {dataset, alias, objectId},
        "SELECT object_id FROM aliases WHERE dataset = ? AND alias = ?", dataset, alias);
    if (holder.isPresent() && !holder.get().equals(objectId)) {
      throw new AliasAlreadyExistsException("alias '" + alias + "' already exists in dataset '" + dataset + "'");
    }
  }

  private static Optional<String> datasetOf(PooledConnection c, String id) throws SQLException {
    return c.queryOne("SELECT dataset FROM objects WHERE id = ?", rs -> rs.getString(1), id);
  }

  private static Optional<ObjectRecord> load(PooledConnection c, String id) throws SQLException {
    Optional<String[]> row = c.queryOne("SELECT class_name, language, dataset, master_backend_id, version_of"
            + " FROM objects WHERE id = ?",
        rs -> new String[] {rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5)}, id);
    if (row.isEmpty()) {
      return Optional.empty();
    }
    String[] r = row.get();
    List<String> replicas = c.query("SELECT backend_id FROM object_replicas WHERE object_id = ?"
        + " ORDER BY backend_id", rs -> rs.getString(1), id);
    List<String> aliases = c.query("SELECT alias FROM aliases WHERE object_id = ? ORDER BY alias",
        rs -> rs.getString(1), id);
    return Optional.of(new ObjectRecord(id, r[0], Language.valueOf(r[1]), r[2], r[3], replicas, aliases,
        r[4] == null ? "" : r[4]));
  }
}
