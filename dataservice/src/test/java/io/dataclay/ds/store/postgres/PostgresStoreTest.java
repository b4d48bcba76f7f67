package io.dataclay.ds.store.postgres;

import static io.dataclay.ds.store.TestObjects.object;
import static io.dataclay.ds.store.TestObjects.putNumbered;
import static io.dataclay.ds.store.TestObjects.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.ds.store.EncryptedStoreContract;
import io.dataclay.ds.store.EngineUnderTest;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.ObjectStoreContract;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.TestObjects;
import io.dataclay.ds.store.TestPools;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.testing.PostgresServer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The postgres engine passes the whole store contract without a store key and with one, against
 * a real PostgreSQL server (each test is a backend of its own); on top, what is particular to a
 * database: the URL, backends sharing a database, headers served from DRAM, what encryption
 * protects in the rows, and erasing a backend's rows.
 */
class PostgresStoreTest {
  private static PostgresServer server;

  @BeforeAll
  static void startPostgres() throws Exception {
    server = PostgresServer.start();
  }

  @AfterAll
  static void stopPostgres() {
    if (server != null) {
      server.close();
    }
  }

  /** The engine on the database at {@code url}, each pool directory a backend of its own. */
  private static EngineUnderTest postgres(String url) {
    return EngineUnderTest.of(PostgresStore.ENGINE).unbounded()
        .with(c -> c.withDatabaseUrl(url).withBackend("backend " + c.path()));
  }

  @Nested
  class Plain extends ObjectStoreContract {
    private static final String DATABASE = "store_test";
    private static String url;

    @BeforeAll
    static void createDatabase() throws Exception {
      url = server.createDatabase(DATABASE);
    }

    Plain() {
      super(postgres(url));
    }

    @Test
    void aMissingDatabaseUrlIsRefusedNamingTheSettingAndNothingIsCreated() {
      Path elsewhere = TestPools.newPath();

      InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
          () -> ObjectStores.open(new StoreConfig(PostgresStore.ENGINE, elsewhere, poolSize())));

      assertTrue(e.getMessage().contains("DATACLAY_STORE_URL"), e.getMessage());
      assertFalse(elsewhere.toFile().exists());
    }

    @Test
    void anUnreachableDatabaseIsRefusedNamingItsUrlWithoutThePassword() throws Exception {
      int closedPort;
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        closedPort = s.getLocalPort();
      }
      Path elsewhere = TestPools.newPath();
      String secretUrl = "jdbc:postgresql://127.0.0.1:" + closedPort + "/nowhere?user=bob&password=hunter2";
      try {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> ObjectStores.open(
            new StoreConfig(PostgresStore.ENGINE, elsewhere, poolSize()).withDatabaseUrl(secretUrl)));

        assertTrue(e.getMessage().contains("127.0.0.1:" + closedPort + "/nowhere"), e.getMessage());
        assertTrue(e.getMessage().contains("password=***"), e.getMessage());
        assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
      } finally {
        TestPools.delete(elsewhere);
      }
    }

    @Test
    void aRecordOverHalfAGigabyteIsReadBackWhole() {
      // setup: past 512 MiB, the text form of a bytea (hex) would pass PostgreSQL's 1 GB bound
      byte[] big = new byte[(512 << 20) + 4096];
      big[0] = 1;
      big[big.length - 1] = 7;
      UUID id = UUID.randomUUID();
      store.put(object(id, Map.of("a", FieldValue.of(big))));
      big = null;
      // run
      byte[] read = store.get(id).orElseThrow().fields().get("a").value();
      // verify
      assertEquals((512 << 20) + 4096, read.length);
      assertEquals(1, read[0]);
      assertEquals(7, read[read.length - 1]);
    }

    @Test
    void twoBackendsInOneDatabaseKeepTheirObjectsApart() {
      // setup
      Path otherDir = TestPools.newPath();
      UUID mine = UUID.randomUUID();
      UUID theirs = UUID.randomUUID();
      store.put(object(mine, "a", "mine"));
      try (ObjectStore other = ObjectStores.open(config(otherDir, poolSize()))) {
        // run
        other.put(object(theirs, "a", "theirs"));
        // verify
        assertEquals(1, other.count());
        assertTrue(other.get(mine).isEmpty());
        assertEquals("theirs", text(other.get(theirs).orElseThrow().fields().get("a")));
      } finally {
        TestPools.delete(otherDir);
      }
      assertEquals(1, store.count());
      assertTrue(store.get(theirs).isEmpty());
    }

    @Test
    void openingWaitsUntilEverySessionOfThePreviousStoreEnded() throws Exception {
      // setup: the previous store is gone but for one session of its pool, still running a statement,
      // as a killed Data Service's write is finished by the server after its client died
      store.close();
      ConnectionPool previous = new ConnectionPool(url, 1, config(poolDir, poolSize()).backendName());
      CountDownLatch started = new CountDownLatch(1);
      AtomicLong endedAt = new AtomicLong();
      Thread statement = new Thread(() -> {
        try {
          previous.with(c -> {
            try (Statement s = c.createStatement()) {
              started.countDown();
              s.execute("SELECT pg_sleep(1.5)");
            }
            return null;
          });
        } catch (java.sql.SQLException e) {
          throw new IllegalStateException(e);
        } finally {
          endedAt.set(System.nanoTime());
          previous.close(); // the session ends: its shared lock of the backend's writers goes
        }
      });
      statement.start();
      assertTrue(started.await(10, TimeUnit.SECONDS), "the previous session's statement did not start");
      Thread.sleep(300);
      // run
      store = open(poolSize());
      long openedAt = System.nanoTime();
      statement.join();
      // verify: the store was opened only once that session had ended, and works
      assertTrue(endedAt.get() != 0 && openedAt > endedAt.get(), "opened while a session of the previous store ran");
      UUID id = UUID.randomUUID();
      store.put(object(id, "v", "after"));
      assertEquals("after", text(store.get(id).orElseThrow().fields().get("v")));
    }

    @Test
    void aSecondStoreForTheSameBackendIsRefusedEvenFromAnotherDirectory() {
      Path otherDir = TestPools.newPath();
      StoreConfig sameBackend = config(otherDir, poolSize()).withBackend(config(poolDir, poolSize()).backendName());
      try {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> ObjectStores.open(sameBackend));

        assertTrue(e.getMessage().contains("already open"), e.getMessage());
      } finally {
        TestPools.delete(otherDir);
      }
    }

    @Test
    void headersCountAndIdsComeFromDramWhileTheDatabaseIsUnreachable() throws Exception {
      // setup
      Set<UUID> ids = putNumbered(store, 10);
      UUID one = ids.iterator().next();
      try {
        // run: no new connection to the database, every open one cut
        admin("ALTER DATABASE " + DATABASE + " ALLOW_CONNECTIONS false",
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + DATABASE + "'");
        // verify
        assertThrows(DataClayException.class, () -> store.get(one));
        assertEquals(TestObjects.HEADER, store.header(one).orElseThrow());
        assertEquals(10, store.count());
        Set<UUID> seen = new HashSet<>();
        store.forEachId(seen::add);
        assertEquals(ids, seen);
      } finally {
        admin("ALTER DATABASE " + DATABASE + " ALLOW_CONNECTIONS true");
      }
      // verify: broken connections are replaced once the database is back
      assertTrue(store.get(one).isPresent());
    }

    private static void admin(String... statements) throws Exception {
      try (Connection c = DriverManager.getConnection(server.jdbcUrl("postgres")); Statement s = c.createStatement()) {
        for (String sql : statements) {
          s.execute(sql);
        }
      }
    }
  }

  @Nested
  class Encrypted extends EncryptedStoreContract {
    private static final String DATABASE = "encrypted_store_test";
    private static String url;

    @BeforeAll
    static void createDatabase() throws Exception {
      url = server.createDatabase(DATABASE);
    }

    Encrypted() {
      super(postgres(url));
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
}
