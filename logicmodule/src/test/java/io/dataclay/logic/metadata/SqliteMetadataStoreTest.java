package io.dataclay.logic.metadata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.PrivatePaths;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The metadata conformance suite on the embedded SQLite database (in a directory it must create). */
class SqliteMetadataStoreTest extends MetadataStoreConformance {
  @TempDir
  Path dir;

  @Override
  protected String freshDatabaseUrl() {
    return "jdbc:sqlite:" + dir.resolve("lm").resolve("metadata.db");
  }

  @Test
  void the_database_its_log_files_and_their_directory_are_its_users_alone() throws Exception {
    // the conformance setup opened the database and wrote to it: its -wal and -shm files exist now
    Path lm = dir.resolve("lm");
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(lm)));
    for (String name : List.of("metadata.db", "metadata.db-wal", "metadata.db-shm")) {
      assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(lm.resolve(name))), name);
    }
  }

  @Test
  void a_version_1_database_is_upgraded_in_place_keeping_its_accounts_contracts_and_sessions() throws Exception {
    // setup: the schema and rows a Logic Module of schema version 1 wrote
    String url = writtenBefore("v1", List.of(
          "CREATE TABLE schema_version (version INTEGER PRIMARY KEY)",
          "INSERT INTO schema_version VALUES (1)",
          "CREATE TABLE accounts (username TEXT PRIMARY KEY, password_hash TEXT NOT NULL, password_salt TEXT NOT NULL,"
              + " password_iterations INTEGER NOT NULL, admin BOOLEAN NOT NULL)",
          "CREATE TABLE datasets (name TEXT PRIMARY KEY, owner TEXT NOT NULL REFERENCES accounts(username))",
          "CREATE TABLE contracts (dataset TEXT NOT NULL REFERENCES datasets(name), beneficiary TEXT NOT NULL"
              + " REFERENCES accounts(username), PRIMARY KEY (dataset, beneficiary))",
          "CREATE TABLE sessions (token_sha256 TEXT PRIMARY KEY, username TEXT NOT NULL REFERENCES"
              + " accounts(username), dataset TEXT NOT NULL REFERENCES datasets(name), expires_at_ms BIGINT NOT NULL,"
              + " closed BOOLEAN NOT NULL)",
          "INSERT INTO accounts VALUES ('alice', 'h', 's', 1, 0), ('bob', 'h', 's', 1, 0)",
          "INSERT INTO datasets VALUES ('alice', 'alice'), ('bob', 'bob')",
          "INSERT INTO contracts VALUES ('alice', 'bob')",
          "INSERT INTO sessions VALUES ('tok', 'bob', 'alice', 99, 0)"));
    // an earlier release made the file 0644: the Logic Module refuses it until `chmod 600`
    Path file = dir.resolve("v1").resolve("metadata.db");
    MetadataUnavailableException readable = assertThrows(MetadataUnavailableException.class,
        () -> MetadataStore.open(url, MetadataSync.NORMAL));
    assertTrue(readable.getMessage().contains("chmod 600 " + file), readable.getMessage());
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    // run
    try (MetadataStore upgraded = MetadataStore.open(url, MetadataSync.NORMAL)) {
      // verify: the old contract is a read-write one without end, the old session a user's
      assertEquals(List.of(new ContractRecord("alice", "alice", "bob", false, 0, 0)),
          upgraded.accounts().contractsTo("bob"));
      assertNull(upgraded.sessions().find("tok").orElseThrow().backendId());
      assertFalse(upgraded.accounts().find("alice").orElseThrow().mayRegisterModels());
    }
  }

  @Test
  void a_version_2_database_keeps_administrators_models_published_and_unpublishes_the_others() throws Exception {
    // setup: the models a Logic Module of schema version 2 wrote (every account used every model)
    String url = writtenBefore("v2", List.of(
          "CREATE TABLE schema_version (version INTEGER PRIMARY KEY)",
          "INSERT INTO schema_version VALUES (2)",
          "CREATE TABLE accounts (username TEXT PRIMARY KEY, password_hash TEXT NOT NULL, password_salt TEXT NOT NULL,"
              + " password_iterations INTEGER NOT NULL, admin BOOLEAN NOT NULL,"
              + " may_register_models BOOLEAN NOT NULL DEFAULT FALSE)",
          "CREATE TABLE models (namespace TEXT PRIMARY KEY, language TEXT NOT NULL,"
              + " owner TEXT NOT NULL REFERENCES accounts(username), version BIGINT NOT NULL)",
          "INSERT INTO accounts VALUES ('root', 'h', 's', 1, 1, 0), ('carol', 'h', 's', 1, 0, 1)",
          "INSERT INTO models VALUES ('admin', 'PYTHON', 'root', 3), ('tools', 'PYTHON', 'carol', 1)"));
    Files.setPosixFilePermissions(dir.resolve("v2").resolve("metadata.db"), PosixFilePermissions.fromString("rw-------"));
    // run
    try (MetadataStore upgraded = MetadataStore.open(url, MetadataSync.NORMAL)) {
      boolean toolsAtFirst = upgraded.models().find("tools").orElseThrow().published();
      ModelRecord published = upgraded.models().setPublished("tools", true).orElseThrow();
      // verify: the administrator's model stays usable by everyone; carol's until she publishes it
      assertTrue(upgraded.models().find("admin").orElseThrow().published());
      assertEquals(3, upgraded.models().find("admin").orElseThrow().version());
      assertFalse(toolsAtFirst);
      assertTrue(published.published());
      assertEquals(1, published.revision());
      assertFalse(published.withdrawn());
    }
  }

  // a database an earlier release wrote: these statements, run on a new file in a private directory of its own
  private String writtenBefore(String name, List<String> statements) throws Exception {
    Files.createDirectories(dir.resolve(name), PrivatePaths.DIRECTORY);
    String url = "jdbc:sqlite:" + dir.resolve(name).resolve("metadata.db");
    try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
      for (String sql : statements) {
        s.execute(sql);
      }
    }
    return url;
  }
}
