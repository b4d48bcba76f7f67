package io.dataclay.logic.metadata;

import java.util.List;

/**
 * The tables of imports (docs/internals.md "Snapshots"), created idempotently beside the main
 * schema: what an open import staged (its objects as the backends report them, its aliases) and
 * which imports committed. Staging rows only live while an import is open; an import does not
 * survive a Logic Module restart, so they are cleared at start.
 */
final class SnapshotSchema {
  private SnapshotSchema() {}

  /** Creates what is missing and clears what earlier runs staged. */
  static void create(Jdbc jdbc) {
    List<String> ddl = List.of(
        "CREATE TABLE IF NOT EXISTS import_staged ("
            + " import_id TEXT NOT NULL,"
            + " id TEXT NOT NULL,"
            + " staged_on TEXT NOT NULL,"       // the backend holding this copy
            + " replica_of TEXT,"               // null: the master copy; else the master's backend
            + " class_name TEXT NOT NULL,"
            + " language TEXT NOT NULL,"
            + " dataset TEXT NOT NULL,"
            + " version_of TEXT,"
            + " PRIMARY KEY (import_id, id, staged_on))",
        // the replicas each staged master copy declares (its backend passes changes on to them)
        "CREATE TABLE IF NOT EXISTS import_declared ("
            + " import_id TEXT NOT NULL,"
            + " id TEXT NOT NULL,"
            + " backend_id TEXT NOT NULL,"
            + " PRIMARY KEY (import_id, id, backend_id))",
        "CREATE TABLE IF NOT EXISTS import_aliases ("
            + " import_id TEXT NOT NULL,"
            + " dataset TEXT NOT NULL,"
            + " alias TEXT NOT NULL,"
            + " object_id TEXT NOT NULL,"
            + " PRIMARY KEY (import_id, dataset, alias))",
        "CREATE TABLE IF NOT EXISTS imports_committed ("
            + " import_id TEXT PRIMARY KEY,"
            + " committed_at_ms BIGINT NOT NULL,"
            + " objects BIGINT NOT NULL)");
    jdbc.transaction(c -> {
      for (String statement : ddl) {
        c.execute(statement);
      }
      c.update("DELETE FROM import_staged");
      c.update("DELETE FROM import_declared");
      c.update("DELETE FROM import_aliases");
      return null;
    });
  }
}
