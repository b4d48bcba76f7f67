package io.dataclay.ds.store.postgres;

import static io.dataclay.ds.store.TestObjects.object;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.ds.store.EncryptedStoreContract;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.testing.PostgresServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The postgres engine with a store key, against a real PostgreSQL server started for this class:
 * the store contract, the encryption promises (what "the pool" holds is the backend's rows), and
 * erasing a backend's rows.
 */
class EncryptedPostgresStoreTest extends EncryptedStoreContract {
  private static final String DATABASE = "encrypted_store_test";
  private static PostgresServer server;
  private static String url;

  @BeforeAll
  static void startPostgres() throws Exception {
    server = PostgresServer.start();
    url = server.createDatabase(DATABASE);
  }

  @AfterAll
  static void stopPostgres() {
    if (server != null) {
      server.close();
    }
  }

  @Override
  protected String engine() {
    return PostgresStore.ENGINE;
  }

  @Override
  protected boolean bounded() {
    return false;
  }

  @Override
  protected StoreConfig plainConfig(Path path, long size) {
    return new StoreConfig(engine(), path, size).withDatabaseUrl(url).withBackend("backend " + path);
  }

  /** Searches the backend's rows (records and header columns) for the bytes. */
  @Override
  protected boolean storeContains(Path path, byte[] bytes) {
    return !query("SELECT count(*) FROM " + ObjectTable.TABLE + " WHERE backend = ? AND (position(? in record) > 0"
        + " OR position(? in convert_to(class_name || dataset, 'UTF8')) > 0)", path, bytes, bytes).equals("0");
  }

  /** A digest of the backend's rows and its key check. */
  @Override
  protected String snapshot(Path path) {
    return query("SELECT md5(coalesce(string_agg(id::text || class_name || encode(record, 'hex'), ',' ORDER BY id), ''))"
        + " || ' ' || coalesce((SELECT key_check FROM " + KeyCheckTable.TABLE + " WHERE backend = ?), '-')"
        + " FROM " + ObjectTable.TABLE + " WHERE backend = ?", path, path);
  }

  @Test
  void erasingDeletesTheBackendsRowsAndKeyCheckAndIsRefusedWhileTheStoreIsOpen() throws Exception {
    // setup
    store.put(object(UUID.randomUUID(), "a", "1"));
    store.put(object(UUID.randomUUID(), "a", "2"));
    StoreConfig mine = config(poolDir, poolSize());
    // run + verify: refused while open
    InvalidArgumentException open = assertThrows(InvalidArgumentException.class, () -> ObjectStores.erase(mine));
    assertTrue(open.getMessage().contains("already open"), open.getMessage());
    store.close();
    // run: erased without the key
    String erased = ObjectStores.erase(mine.withKeyFile(null));
    // verify
    assertTrue(erased.contains("2 object row(s) and its key check deleted"), erased);
    assertEquals("0", query("SELECT count(*) FROM " + ObjectTable.TABLE + " WHERE backend = ?", poolDir));
    assertTrue(snapshot(poolDir).endsWith("-"), "the key check is still there");
    assertTrue(!Files.exists(poolDir), "the pool directory is still there");
    store = open(poolSize()); // a new, empty, encrypted store of the same backend
    assertEquals(0, store.count());
  }

  /** The first column of the one row {@code sql} returns; a Path parameter binds as its backend name. */
  private static String query(String sql, Object... parameters) {
    try (Connection c = DriverManager.getConnection(url); PreparedStatement s = c.prepareStatement(sql)) {
      for (int i = 0; i < parameters.length; i++) {
        if (parameters[i] instanceof byte[] bytes) {
          s.setBytes(i + 1, bytes);
        } else {
          s.setString(i + 1, "backend " + parameters[i]);
        }
      }
      try (ResultSet r = s.executeQuery()) {
        r.next();
        return r.getString(1);
      }
    } catch (Exception e) {
      throw new IllegalStateException(sql + ": " + e, e);
    }
  }
}
