package io.dataclay.logic.metadata;

import io.dataclay.common.Language;
import io.dataclay.exceptions.AliasAlreadyExistsException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
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
   * Registers groups of objects, each all or nothing with its alias and independently of the
   * others, in one transaction, durable when this returns. One outcome per group, in order: empty
   * when registered, else why it was refused (nothing of that group is registered):
   * <ul>
   *   <li>{@link ObjectAlreadyExistsException} naming the ID when an object is registered by
   *       another master or with another class, language, dataset or original, or appears in an
   *       earlier group of the request. Registering an object again alike from the same master
   *       changes nothing (a backend re-registers what it stores after an unclean stop);
   *   <li>{@link AliasAlreadyExistsException} when the alias names another object;
   *   <li>{@link ObjectDoesNotExistException} when {@code aliasObjectId} is neither in the group
   *       nor registered.
   * </ul>
   */
  public List<Optional<DataClayException>> register(List<ObjectGroup> groups) {
    Map<Integer, DataClayException> refused = repeatedIds(groups);
    // Optimistic: one transaction registers every group not known to be refused. If it finds a
    // group to refuse, it rolls back and the next one goes without that group, so an accepted
    // group never carries a refused one's rows. Each round refuses at least one more group; as
    // conflicts with committed rows are all found in the first, a refusal usually costs one more.
    while (true) {
      try {
        jdbc.transaction(c -> {
          registerAll(c, groups, refused);
          return null;
        });
        break;
      } catch (GroupsRefused r) {
        refused.putAll(r.refusals);
      }
    }
    List<Optional<DataClayException>> outcomes = new ArrayList<>(groups.size());
    for (int g = 0; g < groups.size(); g++) {
      outcomes.add(Optional.ofNullable(refused.get(g)));
    }
    return outcomes;
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
  private static void requireMaster(SqlConnection c, List<String> ids, String master) throws SQLException {
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

  // An ID in two groups of one request: the later group is refused, as it would be by the row.
  private static Map<Integer, DataClayException> repeatedIds(List<ObjectGroup> groups) {
    Map<Integer, DataClayException> refused = new HashMap<>();
    Map<String, Integer> first = new HashMap<>();
    for (int g = 0; g < groups.size(); g++) {
      for (ObjectRecord o : groups.get(g).objects()) {
        Integer earlier = first.putIfAbsent(o.id(), g);
        if (earlier != null && earlier != g && !refused.containsKey(g)) {
          refused.put(g, new ObjectAlreadyExistsException("object " + o.id() + " is already being registered by"
              + " another call"));
        }
      }
    }
    return refused;
  }

  // Registers every group not in {@code skip}; throws GroupsRefused (the caller's transaction
  // rolls back) when one of them must be refused.
  private static void registerAll(SqlConnection c, List<ObjectGroup> groups, Map<Integer, DataClayException> skip)
      throws SQLException {
    List<Object[]> rows = new ArrayList<>();
    List<Integer> rowGroup = new ArrayList<>();
    List<ObjectRecord> rowObject = new ArrayList<>();
    for (int g = 0; g < groups.size(); g++) {
      if (!skip.containsKey(g)) {
        for (ObjectRecord o : groups.get(g).objects()) {
          rows.add(objectRow(o));
          rowGroup.add(g);
          rowObject.add(o);
        }
      }
    }
    int[] counts = c.batch(INSERT_OBJECT, rows);
    Map<Integer, DataClayException> refused = new HashMap<>();
    for (int r = 0; r < rows.size(); r++) {
      // not inserted (or the driver did not say): only the same object from the same master is fine
      if (counts[r] != 1 && !refused.containsKey(rowGroup.get(r))) {
        Optional<DataClayException> conflict = conflict(c, rowObject.get(r));
        if (conflict.isPresent()) {
          refused.put(rowGroup.get(r), conflict.get());
        }
      }
    }
    List<ObjectRecord> accepted = new ArrayList<>();
    for (int g = 0; g < groups.size(); g++) {
      ObjectGroup group = groups.get(g);
      if (skip.containsKey(g) || refused.containsKey(g)) {
        continue;
      }
      if (group.alias() != null) {
        try {
          insertAlias(c, aliasDataset(c, group), group.alias(), group.aliasObjectId());
        } catch (AliasAlreadyExistsException | ObjectDoesNotExistException e) {
          refused.put(g, e);
          continue;
        }
      }
      accepted.addAll(group.objects());
    }
    if (!refused.isEmpty()) {
      throw new GroupsRefused(refused);
    }
    insertReplicas(c, accepted);
  }

  // Why {@code o} cannot be registered next to the row holding its ID, if it cannot: a row of
  // another master, class, language, dataset or original is another object.
  private static Optional<DataClayException> conflict(SqlConnection c, ObjectRecord o) throws SQLException {
    for (int attempt = 0; attempt < 3; attempt++) {
      Optional<String[]> held = c.queryOne("SELECT class_name, language, dataset, master_backend_id, version_of"
              + " FROM objects WHERE id = ?",
          rs -> new String[] {rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5)},
          o.id());
      if (held.isEmpty()) {
        // removed since the insert looked (a concurrent unregistration): try again
        if (c.update(INSERT_OBJECT, objectRow(o)) == 1) {
          return Optional.empty();
        }
        continue;
      }
      String[] h = held.get();
      if (!h[3].equals(o.masterBackendId())) {
        return Optional.of(new ObjectAlreadyExistsException("object " + o.id() + " is already registered by another"
            + " backend: choose a new ID"));
      }
      boolean alike = h[0].equals(o.className()) && h[1].equals(o.language().name()) && h[2].equals(o.dataset())
          && (h[4] == null ? "" : h[4]).equals(o.versionOf());
      // The message says which ID, never what the other object is (its dataset is not the caller's to learn).
      return alike ? Optional.empty() : Optional.of(new ObjectAlreadyExistsException("object " + o.id()
          + " is already registered as another object: choose a new ID"));
    }
    throw new InternalException("object " + o.id() + " kept appearing and vanishing under a concurrent writer");
  }

  private static String aliasDataset(SqlConnection c, ObjectGroup group) throws SQLException {
    for (ObjectRecord o : group.objects()) {
      if (o.id().equals(group.aliasObjectId())) {
        return o.dataset();
      }
    }
    return datasetOf(c, group.aliasObjectId()).orElseThrow(() -> new ObjectDoesNotExistException(
        "alias_object_id: object " + group.aliasObjectId() + " is neither in the request nor registered"));
  }

  /** What {@link #registerAll} found to refuse; the transaction rolls back as it passes. */
  private static final class GroupsRefused extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient Map<Integer, DataClayException> refusals;

    GroupsRefused(Map<Integer, DataClayException> refusals) {
      super(null, null, false, false);
      this.refusals = refusals;
    }
  }

  private static Object[] objectRow(ObjectRecord o) {
    return new Object[] {o.id(), o.className(), o.language().name(), o.dataset(), o.masterBackendId(),
        o.versionOf().isEmpty() ? null : o.versionOf()};
  }

  private static void insertReplicas(SqlConnection c, List<ObjectRecord> objects) throws SQLException {
    List<Object[]> rows = new ArrayList<>();
    for (ObjectRecord o : objects) {
      for (String backend : o.replicaBackendIds()) {
        rows.add(new Object[] {o.id(), backend});
      }
    }
    c.batch("INSERT INTO object_replicas (object_id, backend_id) VALUES (?, ?) ON CONFLICT DO NOTHING", rows);
  }

  private static void insertAlias(SqlConnection c, String dataset, String alias, String objectId)
      throws SQLException {
    // the (dataset, alias) primary key decides between concurrent writers: exactly one insert wins
    Optional<String> holder = c.claim("INSERT INTO aliases (dataset, alias, object_id) VALUES (?, ?, ?)"
            + " ON CONFLICT DO NOTHING", new Object[] {dataset, alias, objectId},
        "SELECT object_id FROM aliases WHERE dataset = ? AND alias = ?", dataset, alias);
    if (holder.isPresent() && !holder.get().equals(objectId)) {
      throw new AliasAlreadyExistsException(dataset + "/" + alias + " already exists");
    }
  }

  private static Optional<String> datasetOf(SqlConnection c, String id) throws SQLException {
    return c.queryOne("SELECT dataset FROM objects WHERE id = ?", rs -> rs.getString(1), id);
  }

  private static Optional<ObjectRecord> load(SqlConnection c, String id) throws SQLException {
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
