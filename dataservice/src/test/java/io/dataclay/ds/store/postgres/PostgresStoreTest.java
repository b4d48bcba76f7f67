package io.dataclay.ds.store.postgres;

import static io.dataclay.ds.store.TestObjects.object;
import static io.dataclay.ds.store.TestObjects.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The postgres engine passes the whole store contract against a real PostgreSQL server started
 * for this class (each test is a backend of its own in one database); on top, what is particular
 * to a database: the URL, backends sharing a database, and headers served from DRAM.
 */
class PostgresStoreTest extends ObjectStoreContract {
  private static final String DATABASE = "store_test";
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
  protected StoreConfig config(Path path, long size) {
    return super.config(path, size).withDatabaseUrl(url).withBackend("backend " + path);
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
    Set<UUID> ids = new HashSet<>();
    for (int i = 0; i < 10; i++) {
      UUID id = UUID.randomUUID();
      ids.add(id);
      store.put(object(id, "i", Integer.toString(i)));
    }
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
