package io.dataclay.logic.metadata;

import io.dataclay.exceptions.InternalException;
import java.util.List;

/**
 * The one metadata schema, for SQLite and PostgreSQL alike. Created idempotently at start inside
 * one transaction (both databases have transactional DDL, so a crash leaves all of it or none).
 */
final class Schema {
  /** Version this code writes; a database with a newer version is refused, an older one upgraded. */
  static final int VERSION = 3;

  private Schema() {}

  /** Creates whatever is missing and checks the recorded version. */
  static void create(Jdbc jdbc) {
    String bytes = jdbc.dialect().bytesType();
    List<String> ddl = List.of(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY)",
        "CREATE TABLE IF NOT EXISTS accounts ("
            + " username TEXT PRIMARY KEY,"
            + " password_hash TEXT NOT NULL,"
            + " password_salt TEXT NOT NULL,"
            + " password_iterations INTEGER NOT NULL,"
            + " admin BOOLEAN NOT NULL,"
            + " may_register_models BOOLEAN NOT NULL DEFAULT FALSE)",
        "CREATE TABLE IF NOT EXISTS datasets ("
            + " name TEXT PRIMARY KEY,"
            + " owner TEXT NOT NULL REFERENCES accounts(username))",
        "CREATE INDEX IF NOT EXISTS datasets_by_owner ON datasets(owner)",
        "CREATE TABLE IF NOT EXISTS contracts ("
            + " dataset TEXT NOT NULL REFERENCES datasets(name),"
            + " beneficiary TEXT NOT NULL REFERENCES accounts(username),"
            + " read_only BOOLEAN NOT NULL DEFAULT FALSE,"
            + " begins_at_ms BIGINT NOT NULL DEFAULT 0,"
            + " expires_at_ms BIGINT NOT NULL DEFAULT 0,"
            + " PRIMARY KEY (dataset, beneficiary))",
        "CREATE INDEX IF NOT EXISTS contracts_by_beneficiary ON contracts(beneficiary)",
        "CREATE TABLE IF NOT EXISTS sessions ("
            + " token_sha256 TEXT PRIMARY KEY,"
            + " username TEXT NOT NULL REFERENCES accounts(username),"
            + " dataset TEXT NOT NULL REFERENCES datasets(name),"
            + " expires_at_ms BIGINT NOT NULL,"
            + " closed BOOLEAN NOT NULL,"
            + " backend_id TEXT)",
        "CREATE INDEX IF NOT EXISTS sessions_by_user ON sessions(username)",
        // published: usable by every account, not only its owner and administrators; revision: the
        // model's last change in the sequence model_revision counts (backends order changes by it)
        "CREATE TABLE IF NOT EXISTS models ("
            + " namespace TEXT PRIMARY KEY,"
            + " language TEXT NOT NULL,"
            + " owner TEXT NOT NULL REFERENCES accounts(username),"
            + " version BIGINT NOT NULL,"
            + " published BOOLEAN NOT NULL DEFAULT FALSE,"
            + " revision BIGINT NOT NULL DEFAULT 0)",
        // one row: the last model change (a removed model leaves no row, so the count lives here)
        "CREATE TABLE IF NOT EXISTS model_revision (id INTEGER PRIMARY KEY, value BIGINT NOT NULL)",
        "INSERT INTO model_revision (id, value) VALUES (1, 0) ON CONFLICT DO NOTHING",
        // A file path (a Python module, a Java class file) belongs to one namespace per language:
        // the primary key makes the database refuse a second owner.
        "CREATE TABLE IF NOT EXISTS model_files ("
            + " language TEXT NOT NULL,"
            + " path TEXT NOT NULL,"
            + " namespace TEXT NOT NULL REFERENCES models(namespace),"
            + " position INTEGER NOT NULL,"
            + " content " + bytes + " NOT NULL,"
            + " PRIMARY KEY (language, path))",
        "CREATE INDEX IF NOT EXISTS model_files_by_namespace ON model_files(namespace)",
        "CREATE TABLE IF NOT EXISTS model_classes ("
            + " language TEXT NOT NULL,"
            + " name TEXT NOT NULL,"
            + " namespace TEXT NOT NULL REFERENCES models(namespace),"
            + " position INTEGER NOT NULL,"
            + " PRIMARY KEY (language, name))",
        "CREATE INDEX IF NOT EXISTS model_classes_by_namespace ON model_classes(namespace)",
        "CREATE TABLE IF NOT EXISTS model_members ("
            + " language TEXT NOT NULL,"
            + " class_name TEXT NOT NULL,"
            + " kind TEXT NOT NULL,"
            + " position INTEGER NOT NULL,"
            + " name TEXT NOT NULL,"
            + " detail TEXT NOT NULL,"
            + " PRIMARY KEY (language, class_name, kind, position),"
            + " FOREIGN KEY (language, class_name) REFERENCES model_classes(language, name) ON DELETE CASCADE)",
        "CREATE TABLE IF NOT EXISTS backends ("
            + " id TEXT PRIMARY KEY,"
            + " name TEXT NOT NULL,"
            + " host TEXT NOT NULL,"
            + " port INTEGER NOT NULL,"
            + " languages TEXT NOT NULL,"
            + " store_engine TEXT NOT NULL)",
        // The three object tables take the bulk of the writes and carry no foreign keys: SQLite
        // checks each one per inserted row (a parent insert even scans its child tables), which
        // tripled the cost of a batch. The service checks datasets and backends before
        // inserting, and none of the referenced rows is ever deleted.
        "CREATE TABLE IF NOT EXISTS objects ("
            + " id TEXT PRIMARY KEY,"
            + " class_name TEXT NOT NULL,"
            + " language TEXT NOT NULL,"
            + " dataset TEXT NOT NULL,"
            + " master_backend_id TEXT NOT NULL,"
            + " version_of TEXT)",
        // Listing a dataset's objects by class (ListObjects) and counting them (ListDatasets): the one
        // index on every object besides the ID's (the next one holds versions only). Without the ID in it, a new row lands at the end of
        // its (dataset, class) run, which costs a registered object about 2 us here, where a key
        // ending in the (random) ID cost 10 us (a page then sorts its class's rows by ID instead).
        "CREATE INDEX IF NOT EXISTS objects_by_dataset_class ON objects(dataset, class_name)",
        // Listing the versions of an object (ListObjects' version_of). Partial: only versions have an
        // entry, so registering an ordinary object costs this index nothing; both databases use it
        // for "version_of = ?", which implies the index's condition.
        "CREATE INDEX IF NOT EXISTS objects_by_version_of ON objects(version_of) WHERE version_of IS NOT NULL",
        "CREATE TABLE IF NOT EXISTS object_replicas ("
            + " object_id TEXT NOT NULL,"
            + " backend_id TEXT NOT NULL,"
            + " PRIMARY KEY (object_id, backend_id))",
        // Aliases are unique per dataset: the primary key decides, under any concurrency.
        "CREATE TABLE IF NOT EXISTS aliases ("
            + " dataset TEXT NOT NULL,"
            + " alias TEXT NOT NULL,"
            + " object_id TEXT NOT NULL,"
            + " PRIMARY KEY (dataset, alias))",
        "CREATE INDEX IF NOT EXISTS aliases_by_object ON aliases(object_id)",
        // Failover (FailoverStore). A backend's term rises each time its masters are promoted away;
        // a promotion waits in object_promotions until its new master confirms it, a demotion in
        // object_demotions until the old master has dropped its stale copy.
        "CREATE TABLE IF NOT EXISTS backend_terms ("
            + " backend_id TEXT PRIMARY KEY,"
            + " term BIGINT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS object_promotions ("
            + " object_id TEXT PRIMARY KEY,"
            + " backend_id TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS object_demotions ("
            + " object_id TEXT NOT NULL,"
            + " backend_id TEXT NOT NULL,"
            + " master_backend_id TEXT NOT NULL,"
            + " PRIMARY KEY (object_id, backend_id))",
        "CREATE INDEX IF NOT EXISTS object_demotions_by_backend ON object_demotions(backend_id)");
    jdbc.transaction(c -> {
      c.execute(ddl.get(0)); // schema_version
      long recorded = c.queryLong("SELECT COALESCE(MAX(version), 0) FROM schema_version");
      if (recorded > VERSION) {
        throw new InternalException("the metadata database has schema version " + recorded
            + ", newer than this Logic Module's " + VERSION + ": upgrade the Logic Module");
      }
      if (recorded == 1) {
        // version 1 lacked access control beyond "granted or not": upgrade in this transaction
        for (String statement : UPGRADE_FROM_1) {
          c.execute(statement);
        }
      }
      if (recorded == 1 || recorded == 2) {
        // versions 1 and 2 let every account use every model: administrators' models stay
        // published, the others become their owners' until published (dataclaycmd PublishModel)
        for (String statement : UPGRADE_FROM_2) {
          c.execute(statement);
        }
      }
      for (String statement : ddl) {
        c.execute(statement);
      }
      if (recorded < VERSION) {
        c.update("INSERT INTO schema_version (version) VALUES (?) ON CONFLICT DO NOTHING", VERSION);
      }
      return null;
    });
  }

  private static final List<String> UPGRADE_FROM_1 = List.of(
      "ALTER TABLE accounts ADD COLUMN may_register_models BOOLEAN NOT NULL DEFAULT FALSE",
      "ALTER TABLE contracts ADD COLUMN read_only BOOLEAN NOT NULL DEFAULT FALSE",
      "ALTER TABLE contracts ADD COLUMN begins_at_ms BIGINT NOT NULL DEFAULT 0",
      "ALTER TABLE contracts ADD COLUMN expires_at_ms BIGINT NOT NULL DEFAULT 0",
      "ALTER TABLE sessions ADD COLUMN backend_id TEXT");

  private static final List<String> UPGRADE_FROM_2 = List.of(
      // as version 2 made it (a database that never had one gets it here, to alter like the others)
      "CREATE TABLE IF NOT EXISTS models (namespace TEXT PRIMARY KEY, language TEXT NOT NULL,"
          + " owner TEXT NOT NULL REFERENCES accounts(username), version BIGINT NOT NULL)",
      "ALTER TABLE models ADD COLUMN published BOOLEAN NOT NULL DEFAULT FALSE",
      "ALTER TABLE models ADD COLUMN revision BIGINT NOT NULL DEFAULT 0",
      "UPDATE models SET published = TRUE WHERE owner IN (SELECT username FROM accounts WHERE admin)");
}
