package io.dataclay.logic.metadata;

import io.dataclay.common.Language;
import io.dataclay.exceptions.AliasAlreadyExistsException;
import io.dataclay.exceptions.DatasetDoesNotExistException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.NamespaceConflictException;
import io.dataclay.exceptions.ObjectAlreadyExistsException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What an open import staged, and its commit (docs/internals.md "Snapshots"): the objects the
 * backends report staged and the import's aliases are written to staging tables nobody else reads,
 * then {@link #commit} checks them against the plan and the cluster and registers everything in
 * one transaction, or nothing.
 */
public final class ImportTables {
  private static final int IN_BATCH = 500;

  /**
   * A staged copy of an object as its backend reports it: {@code replicaOf} null for the master copy,
   * which then declares the backends of its {@code replicas}.
   */
  public record StagedCopy(String id, String replicaOf, String className, Language language, String dataset,
      String versionOf, List<String> replicas) {
    /** Copies the list. */
    public StagedCopy {
      replicas = List.copyOf(replicas);
    }
  }

  /** Masters and replicas a backend is to stage. */
  public record Expected(long masters, long replicas) {}

  /**
   * What a commit creates besides the staged objects and aliases: accounts (created when missing),
   * datasets, contracts, models (with their owners set), what each backend must have staged, and
   * what of this cluster's own it may touch.
   */
  public record Content(List<AccountRecord> accounts, List<MetadataCut.Dataset> datasets,
      List<ContractRecord> contracts, List<ModelRecord> models, Map<String, Expected> expected, MayTouch mayTouch) {}

  /**
   * What an import may touch that this cluster had before its commit, as its administrator allowed:
   * accounts (the import's datasets, contracts and models attach to them), contracts on datasets,
   * objects and aliases in datasets. Checked again inside the commit's transaction, against the
   * cluster as it is then.
   */
  public record MayTouch(boolean existingAccounts, boolean contractsOnExistingDatasets,
      boolean objectsInExistingDatasets) {
    /** Nothing the cluster had. */
    public static final MayTouch NOTHING = new MayTouch(false, false, false);
  }

  /** What a commit registered. */
  public record Committed(long objects, long replicas, long aliases, long datasets, long contracts,
      List<String> accountsCreated, List<ModelRecord> models) {}

  private final Jdbc jdbc;

  ImportTables(Jdbc jdbc) {
    this.jdbc = jdbc;
  }

  /** The IDs of {@code ids} that are registered objects. */
  public List<String> registeredAmong(List<String> ids) {
    return jdbc.transaction(c -> {
      List<String> found = new ArrayList<>();
      for (int from = 0; from < ids.size(); from += IN_BATCH) {
        List<String> part = ids.subList(from, Math.min(ids.size(), from + IN_BATCH));
        found.addAll(c.query("SELECT id FROM objects WHERE id IN (" + String.join(",", Collections.nCopies(part.size(), "?"))
            + ")", rs -> rs.getString(1), part.toArray()));
      }
      return found;
    });
  }

  /** Stages aliases of import {@code importId}; those taken in the cluster are answered (and not staged). */
  public List<MetadataCut.Alias> stageAliases(String importId, List<MetadataCut.Alias> aliases) {
    return jdbc.transaction(c -> {
      List<MetadataCut.Alias> taken = new ArrayList<>();
      List<Object[]> rows = new ArrayList<>(aliases.size());
      for (MetadataCut.Alias a : aliases) {
        if (c.queryOne("SELECT object_id FROM aliases WHERE dataset = ? AND alias = ?", rs -> rs.getString(1),
            a.dataset(), a.alias()).isPresent()) {
          taken.add(a);
        }
        rows.add(new Object[] {importId, a.dataset(), a.alias(), a.objectId()});
      }
      if (taken.isEmpty()) {
        c.batch("INSERT INTO import_aliases (import_id, dataset, alias, object_id) VALUES (?, ?, ?, ?)"
            + " ON CONFLICT DO NOTHING", rows);
      }
      return taken;
    });
  }

  /** Records what backend {@code backendId} reports it staged for import {@code importId}. */
  public void stageCopies(String importId, String backendId, List<StagedCopy> copies) {
    jdbc.transaction(c -> {
      List<Object[]> rows = new ArrayList<>(copies.size());
      for (StagedCopy s : copies) {
        rows.add(new Object[] {importId, s.id(), backendId, s.replicaOf(), s.className(), s.language().name(),
            s.dataset(), s.versionOf()});
      }
      c.batch("INSERT INTO import_staged (import_id, id, staged_on, replica_of, class_name, language, dataset,"
          + " version_of) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", rows);
      List<Object[]> declared = new ArrayList<>();
      for (StagedCopy s : copies) {
        for (String replica : s.replicas()) {
          declared.add(new Object[] {importId, s.id(), replica});
        }
      }
      c.batch("INSERT INTO import_declared (import_id, id, backend_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
          declared);
      return null;
    });
  }

  /**
   * Throws what registering {@code model} now would throw (a file or class of another namespace),
   * its owner made if missing; changes nothing.
   */
  public void checkModel(ModelRecord model) {
    try {
      jdbc.transaction(c -> {
        // an owner the import creates does not exist yet: the trial makes it too, and is rolled back
        c.update("INSERT INTO accounts (username, password_hash, password_salt, password_iterations, admin,"
            + " may_register_models) VALUES (?, '', '', 0, ?, ?) ON CONFLICT DO NOTHING", model.owner(), false, false);
        ModelStore.register(c, model);
        throw new DryRun();
      });
    } catch (DryRun rolledBack) {
      // it would register
    }
  }

  /** Rolls a trial transaction back. */
  private static final class DryRun extends RuntimeException {
    private static final long serialVersionUID = 1L;

    DryRun() {
      super(null, null, false, false);
    }
  }

  /** Forgets what import {@code importId} staged here (it was given up). */
  public void drop(String importId) {
    jdbc.transaction(c -> {
      clear(c, importId);
      return null;
    });
  }

  /** Whether import {@code importId} committed (durably recorded by its commit). */
  public boolean committed(String importId) {
    return jdbc.transaction(c -> c.queryOne("SELECT 1 FROM imports_committed WHERE import_id = ?",
        rs -> rs.getInt(1), importId).isPresent());
  }

  /**
   * Checks what was staged against {@code content} and the cluster, then registers the staged
   * objects, their replicas and the aliases, with the accounts, datasets, contracts and models, and
   * records the import as committed: one transaction, so all of it or none.
   *
   * @throws InvalidArgumentException when the backends did not stage what the plan says
   * @throws ObjectAlreadyExistsException, AliasAlreadyExistsException, PermissionDeniedException,
   *     DatasetDoesNotExistException, io.dataclay.exceptions.NamespaceConflictException: nothing is registered
   */
  public Committed commit(String importId, Content content, long nowMs) {
    return jdbc.transaction(c -> {
      checkStaged(c, importId, content.expected());
      // before anything is inserted: what exists now is what the cluster had (an account created
      // below makes a dataset of its name, which is the import's own)
      checkTouches(c, importId, content);
      List<String> created = new ArrayList<>();
      for (AccountRecord a : content.accounts()) {
        if (AccountStore.create(c, a)) {
          created.add(a.username());
        } else if (!content.mayTouch().existingAccounts()) {
          throw new PermissionDeniedException("account '" + a.username() + "' was made in this cluster while the"
              + " import was open, and the import may not touch existing accounts (--allow existing-accounts)");
        }
      }
      long datasets = 0;
      for (MetadataCut.Dataset d : content.datasets()) {
        datasets += c.update("INSERT INTO datasets (name, owner) VALUES (?, ?) ON CONFLICT DO NOTHING", d.name(),
            d.owner());
        String owner = c.queryOne("SELECT owner FROM datasets WHERE name = ?", rs -> rs.getString(1), d.name())
            .orElseThrow();
        if (!owner.equals(d.owner())) {
          throw new PermissionDeniedException("dataset '" + d.name() + "' belongs to '" + owner + "' in this cluster,"
              + " to '" + d.owner() + "' in the snapshot");
        }
      }
      first(c, "SELECT DISTINCT s.dataset FROM import_staged s LEFT JOIN datasets d ON d.name = s.dataset"
          + " WHERE s.import_id = ? AND d.name IS NULL", importId).ifPresent(d -> {
            throw new DatasetDoesNotExistException("dataset '" + d + "' of imported objects exists neither in this"
                + " cluster nor in the snapshot");
          });
      for (ContractRecord k : content.contracts()) {
        AccountStore.grant(c, k);
      }
      List<ModelRecord> models = new ArrayList<>();
      for (ModelRecord m : content.models()) {
        // an import never replaces code: a namespace registered while it was open is a conflict
        if (c.queryOne("SELECT 1 FROM models WHERE namespace = ?", rs -> rs.getInt(1), m.namespace()).isPresent()) {
          throw new NamespaceConflictException("namespace '" + m.namespace() + "' was registered in this cluster"
              + " while the import was open");
        }
        models.add(ModelStore.register(c, m));
      }
      long objects = c.update("INSERT INTO objects (id, class_name, language, dataset, master_backend_id, version_of)"
          + " SELECT id, class_name, language, dataset, staged_on, version_of FROM import_staged"
          + " WHERE import_id = ? AND replica_of IS NULL", importId);
      long replicas = c.update("INSERT INTO object_replicas (object_id, backend_id) SELECT id, staged_on"
          + " FROM import_staged WHERE import_id = ? AND replica_of IS NOT NULL", importId);
      long aliases = insertAliases(c, importId);
      c.update("INSERT INTO imports_committed (import_id, committed_at_ms, objects) VALUES (?, ?, ?)", importId, nowMs,
          objects);
      clear(c, importId);
      return new Committed(objects, replicas, aliases, datasets, content.contracts().size(), created, models);
    });
  }

  private static void checkStaged(SqlConnection c, String importId, Map<String, Expected> expected)
      throws SQLException {
    Map<String, Expected> staged = new HashMap<>();
    for (Object[] row : c.query("SELECT staged_on, SUM(CASE WHEN replica_of IS NULL THEN 1 ELSE 0 END),"
        + " SUM(CASE WHEN replica_of IS NULL THEN 0 ELSE 1 END) FROM import_staged WHERE import_id = ?"
        + " GROUP BY staged_on", rs -> new Object[] {rs.getString(1), rs.getLong(2), rs.getLong(3)}, importId)) {
      staged.put((String) row[0], new Expected((Long) row[1], (Long) row[2]));
    }
    for (Map.Entry<String, Expected> e : expected.entrySet()) {
      Expected got = staged.getOrDefault(e.getKey(), new Expected(0, 0));
      if (!got.equals(e.getValue())) {
        throw new InvalidArgumentException("backend " + e.getKey() + " staged " + got.masters() + " objects and "
            + got.replicas() + " replicas; the import planned " + e.getValue().masters() + " and "
            + e.getValue().replicas());
      }
    }
    for (String backend : staged.keySet()) {
      if (!expected.containsKey(backend)) {
        throw new InvalidArgumentException("backend " + backend + " staged objects the import did not plan there");
      }
    }
    first(c, "SELECT id FROM import_staged WHERE import_id = ? AND replica_of IS NULL GROUP BY id"
        + " HAVING COUNT(*) > 1", importId).ifPresent(id -> {
          throw new ObjectAlreadyExistsException("object " + id + " was staged as a master copy on two backends");
        });
    first(c, "SELECT r.id FROM import_staged r LEFT JOIN import_staged m ON m.import_id = r.import_id AND m.id = r.id"
        + " AND m.replica_of IS NULL WHERE r.import_id = ? AND r.replica_of IS NOT NULL"
        + " AND (m.id IS NULL OR m.staged_on <> r.replica_of)", importId).ifPresent(id -> {
          throw new InvalidArgumentException("a replica of object " + id + " names a master backend that did not"
              + " stage its master copy");
        });
    // each master copy must pass its changes to exactly the replicas staged for it
    first(c, "SELECT d.id FROM import_declared d LEFT JOIN import_staged r ON r.import_id = d.import_id"
        + " AND r.id = d.id AND r.staged_on = d.backend_id AND r.replica_of IS NOT NULL WHERE d.import_id = ?"
        + " AND r.id IS NULL", importId).ifPresent(id -> {
          throw new InvalidArgumentException("the master copy of object " + id + " names a replica no backend staged");
        });
    first(c, "SELECT r.id FROM import_staged r LEFT JOIN import_declared d ON d.import_id = r.import_id"
        + " AND d.id = r.id AND d.backend_id = r.staged_on WHERE r.import_id = ? AND r.replica_of IS NOT NULL"
        + " AND d.id IS NULL", importId).ifPresent(id -> {
          throw new InvalidArgumentException("a replica of object " + id + " was staged that its master copy does not"
              + " name");
        });
    first(c, "SELECT s.id FROM import_staged s JOIN objects o ON o.id = s.id WHERE s.import_id = ?", importId)
        .ifPresent(id -> {
          throw new ObjectAlreadyExistsException("object " + id + " is already registered in this cluster (was this"
              + " snapshot imported before?)");
        });
  }

  /** Refuses what the import would do to datasets this cluster has, unless it may. */
  private static void checkTouches(SqlConnection c, String importId, Content content) throws SQLException {
    MayTouch may = content.mayTouch();
    if (!may.objectsInExistingDatasets()) {
      first(c, "SELECT s.dataset FROM import_staged s JOIN datasets d ON d.name = s.dataset WHERE s.import_id = ?",
          importId).ifPresent(d -> {
            throw new PermissionDeniedException("the import would add objects to dataset '" + d + "', which this"
                + " cluster has, and may not (--allow objects-in-existing-datasets)");
          });
      first(c, "SELECT a.dataset FROM import_aliases a JOIN datasets d ON d.name = a.dataset WHERE a.import_id = ?",
          importId).ifPresent(d -> {
            throw new PermissionDeniedException("the import would add aliases to dataset '" + d + "', which this"
                + " cluster has, and may not (--allow objects-in-existing-datasets)");
          });
    }
    if (!may.contractsOnExistingDatasets()) {
      for (ContractRecord k : content.contracts()) {
        if (c.queryOne("SELECT 1 FROM datasets WHERE name = ?", rs -> rs.getInt(1), k.dataset()).isPresent()) {
          throw new PermissionDeniedException("the import would grant '" + k.beneficiary() + "' access to dataset '"
              + k.dataset() + "', which this cluster has, and may not (--allow contracts-on-existing-datasets)");
        }
      }
    }
  }

  private static void clear(SqlConnection c, String importId) throws SQLException {
    c.update("DELETE FROM import_staged WHERE import_id = ?", importId);
    c.update("DELETE FROM import_declared WHERE import_id = ?", importId);
    c.update("DELETE FROM import_aliases WHERE import_id = ?", importId);
  }

  private static long insertAliases(SqlConnection c, String importId) throws SQLException {
    first(c, "SELECT a.alias FROM import_aliases a LEFT JOIN import_staged s ON s.import_id = a.import_id"
        + " AND s.id = a.object_id AND s.replica_of IS NULL WHERE a.import_id = ?"
        + " AND (s.id IS NULL OR s.dataset <> a.dataset)", importId).ifPresent(alias -> {
          throw new InvalidArgumentException("alias '" + alias + "' names an object the import did not stage in the"
              + " alias's dataset");
        });
    first(c, "SELECT a.alias FROM import_aliases a JOIN aliases x ON x.dataset = a.dataset AND x.alias = a.alias"
        + " WHERE a.import_id = ?", importId).ifPresent(alias -> {
          throw new AliasAlreadyExistsException("alias '" + alias + "' already exists in this cluster");
        });
    return c.update("INSERT INTO aliases (dataset, alias, object_id) SELECT dataset, alias, object_id"
        + " FROM import_aliases WHERE import_id = ?", importId);
  }

  private static Optional<String> first(SqlConnection c, String sql, String importId) throws SQLException {
    return c.queryOne(sql + " LIMIT 1", rs -> rs.getString(1), importId);
  }
}
