package io.dataclay.logic.metadata;

import io.dataclay.common.Language;
import io.dataclay.exceptions.AliasAlreadyExistsException;
import io.dataclay.exceptions.ObjectAlreadyExistsException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;

/** Object metadata (class, dataset, master, replicas, version link) and the aliases naming objects. */
public final class ObjectMetadataStore {
  private static final String INSERT_OBJECT = "INSERT INTO objects (id, class_name, language, dataset,"
      + " master_backend_id, version_of) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING";
  private static final int STREAM_ROWS = 10_000;

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

  /**
   * Records that {@code backendId} holds replicas of registered objects; IDs not registered are
   * skipped. Only {@code master}, the backend holding their master copies, may say so.
   *
   * @throws PermissionDeniedException when {@code master} is not the master of one of them; nothing changes
   */
  public void addReplicas(List<String> ids, String backendId, String master) {
    jdbc.transaction(c -> {
      requireMaster(c, ids, master);
      List<Object[]> rows = new ArrayList<>(ids.size());
      for (String id : ids) {
        rows.add(new Object[] {id, backendId, id, backendId});
      }
      // a backend holding the master copy is never also listed as a replica of it
      c.batch("INSERT INTO object_replicas (object_id, backend_id) SELECT ?, ? WHERE EXISTS"
          + " (SELECT 1 FROM objects WHERE id = ? AND master_backend_id <> ?) ON CONFLICT DO NOTHING", rows);
      return null;
    });
  }

  /**
   * Records that {@code backendId} no longer holds up-to-date replicas of the objects (it missed a
   * change); said by {@code master} only. Each dropped replica becomes a demotion of {@code
   * backendId} (see FailoverStore): when that backend is heard again it drops its stale copy and
   * gets a fresh replica, so the object keeps its copies.
   *
   * @throws PermissionDeniedException when {@code master} is not the master of one of them; nothing changes
   */
  public void removeReplicas(List<String> ids, String backendId, String master) {
    jdbc.transaction(c -> {
      requireMaster(c, ids, master);
      List<Object[]> rows = new ArrayList<>(ids.size());
      List<Object[]> stale = new ArrayList<>(ids.size());
      for (String id : ids) {
        rows.add(new Object[] {id, backendId});
        stale.add(new Object[] {id, backendId, master});
      }
      int[] removed = c.batch("DELETE FROM object_replicas WHERE object_id = ? AND backend_id = ?", rows);
      List<Object[]> demoted = new ArrayList<>();
      for (int i = 0; i < removed.length; i++) {
        if (removed[i] != 0) {
          demoted.add(stale.get(i));
        }
      }
      c.batch("INSERT INTO object_demotions (object_id, backend_id, master_backend_id) VALUES (?, ?, ?)"
          + " ON CONFLICT (object_id, backend_id) DO UPDATE SET master_backend_id = excluded.master_backend_id",
          demoted);
      return null;
    });
  }

  /**
   * Makes {@code backendId} the master of the objects (a replica it held stops being one), all or
   * nothing; said by {@code master}, their master until now, only.
   *
   * @throws PermissionDeniedException when {@code master} is not the master of one of them; nothing changes
   */
  public void setMaster(List<String> ids, String backendId, String master) {
    jdbc.transaction(c -> {
      requireMaster(c, ids, master);
      List<Object[]> masters = new ArrayList<>(ids.size());
      List<Object[]> replicas = new ArrayList<>(ids.size());
      for (String id : ids) {
        masters.add(new Object[] {backendId, id});
        replicas.add(new Object[] {id, backendId});
      }
      c.batch("UPDATE objects SET master_backend_id = ? WHERE id = ?", masters);
      c.batch("DELETE FROM object_replicas WHERE object_id = ? AND backend_id = ?", replicas);
      return null;
    });
  }

  // Where an object's copies are is changed by the backend holding its master copy only. A master
  // whose replica was promoted while it was cut off (FailoverStore.promote) is refused here, inside
  // the transaction of its change: the no-op update holds the row (PostgreSQL) or the database
  // (SQLite) against a concurrent promotion until the change commits.
  private static void requireMaster(PooledConnection c, List<String> ids, String master) throws SQLException {
    List<Object[]> rows = new ArrayList<>(ids.size());
    for (String id : ids) {
      rows.add(new Object[] {id, master});
    }
    int[] held = c.batch("UPDATE objects SET master_backend_id = master_backend_id WHERE id = ?"
        + " AND master_backend_id = ?", rows);
    for (int i = 0; i < ids.size(); i++) {
      if (held[i] == 1) {
        continue;
      }
      Optional<String> now = c.queryOne("SELECT master_backend_id FROM objects WHERE id = ?", rs -> rs.getString(1),
          ids.get(i));
      if (now.isPresent() && !now.get().equals(master)) {
        throw new PermissionDeniedException("backend " + master + " does not hold the master copy of object "
            + ids.get(i) + " (backend " + now.get() + " does): a backend whose masters were promoted away while it"
            + " was unreachable is fenced");
      }
    }
  }

  /** Forgets objects with their replicas and aliases, in one transaction; unknown IDs are skipped. */
  public void removeObjects(Collection<String> ids) {
    jdbc.transaction(c -> {
      List<Object[]> rows = new ArrayList<>(ids.size());
      for (String id : ids) {
        rows.add(new Object[] {id});
      }
      c.batch("DELETE FROM aliases WHERE object_id = ?", rows);
      c.batch("DELETE FROM object_replicas WHERE object_id = ?", rows);
      c.batch("DELETE FROM objects WHERE id = ?", rows);
      return null;
    });
  }

  /** Objects whose master copy is on {@code backendId} and that have at least one replica. */
  public List<ObjectRecord> replicatedFrom(String backendId) {
    return jdbc.transaction(c -> {
      List<String> ids = c.query("SELECT DISTINCT r.object_id FROM object_replicas r JOIN objects o"
          + " ON o.id = r.object_id WHERE o.master_backend_id = ? ORDER BY r.object_id", rs -> rs.getString(1), backendId);
      List<ObjectRecord> out = new ArrayList<>(ids.size());
      for (String id : ids) {
        load(c, id).ifPresent(out::add);
      }
      return out;
    });
  }

  /**
   * Calls {@code action} with the ID and master backend of every registered object, streaming the
   * rows (a collection's snapshot may hold millions) inside one read transaction.
   */
  public void forEachObject(BiConsumer<String, String> action) {
    jdbc.transaction(c -> {
      PreparedStatement ps = c.prepare("SELECT id, master_backend_id FROM objects");
      ps.setFetchSize(STREAM_ROWS);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          action.accept(rs.getString(1), rs.getString(2));
        }
      }
      return null;
    });
  }

  /** IDs of the objects that have at least one alias, in any dataset. */
  public List<String> aliasedObjectIds() {
    return jdbc.transaction(c -> c.query("SELECT DISTINCT object_id FROM aliases", rs -> rs.getString(1)));
  }

  /** Backends holding a master copy or a replica of at least one registered object. */
  public Set<String> backendsHoldingObjects() {
    return jdbc.transaction(c -> new HashSet<>(c.query("SELECT DISTINCT master_backend_id FROM objects"
        + " UNION SELECT DISTINCT backend_id FROM object_replicas", rs -> rs.getString(1))));
  }

  /**
   * Where each registered object of {@code ids} is stored: its master backend first, then its
   * replicas' backends. IDs not registered are left out.
   */
  public Map<String, List<String>> locations(Collection<String> ids) {
    return jdbc.transaction(c -> {
      Map<String, List<String>> out = new HashMap<>();
      for (String id : ids) {
        Optional<String> master = c.queryOne("SELECT master_backend_id FROM objects WHERE id = ?",
            rs -> rs.getString(1), id);
        if (master.isPresent()) {
          List<String> holders = new ArrayList<>();
          holders.add(master.get());
          holders.addAll(c.query("SELECT backend_id FROM object_replicas WHERE object_id = ? ORDER BY backend_id",
              rs -> rs.getString(1), id));
          out.put(id, holders);
        }
      }
      return out;
    });
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
