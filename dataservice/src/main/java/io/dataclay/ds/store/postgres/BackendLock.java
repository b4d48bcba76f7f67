package io.dataclay.ds.store.postgres;

import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;

/**
 * A PostgreSQL session-level advisory lock on one backend's rows, held on a connection of its own
 * for as long as the store is open: a second store for the same backend, in any process on any
 * machine, is refused instead of interleaving its writes. The server drops the lock when the
 * session ends, so a killed Data Service does not leave it behind (the server notices the closed
 * socket within moments; taking the lock retries for {@value #WAIT_MILLIS} ms to cover that).
 *
 * <p>A killed store's other sessions may outlive its lock session: one that was running a write
 * when its client died finishes that statement, commit included, before the server ends it. A
 * store that read the rows meanwhile would see a write in flight land after it had recovered. So
 * every connection of a store's pool holds a shared lock of the backend's writers ({@link
 * #writerSessionSql}), and taking the backend's lock then waits, for up to {@value
 * #WRITERS_WAIT_MILLIS} ms, until no session holds it: every session of the previous store has
 * ended, and what it committed is in the rows this store reads.
 */
final class BackendLock implements AutoCloseable {
  private static final long WAIT_MILLIS = 3000;
  private static final long WRITERS_WAIT_MILLIS = 10_000;
  private static final long RETRY_MILLIS = 100;
  private static final String STORE = "dataclay-store:";
  private static final String WRITERS = "dataclay-store-writers:";

  private final Connection connection;

  private BackendLock(Connection connection) {
    this.connection = connection;
  }

  /**
   * Connects and takes the lock of {@code backend}.
   *
   * @throws InvalidArgumentException when the database cannot be reached (naming its URL without
   *     the password) or another store holds the lock
   */
  static BackendLock take(ConnectionPool pool, String backend) {
    String shownUrl = pool.shownUrl();
    Connection c;
    try {
      c = pool.connect();
    } catch (SQLException e) {
      throw new InvalidArgumentException("cannot connect to PostgreSQL at " + shownUrl + ": " + e.getMessage());
    }
    try {
      if (!tryFor(c, key(STORE, backend), WAIT_MILLIS)) {
        throw new InvalidArgumentException("the store of backend '" + backend + "' in " + shownUrl
            + " is already open in another Data Service (its PostgreSQL advisory lock is held)");
      }
      long writers = key(WRITERS, backend);
      if (!tryFor(c, writers, WRITERS_WAIT_MILLIS)) {
        throw new InvalidArgumentException("sessions of a previous store of backend '" + backend + "' in " + shownUrl
            + " are still running statements after " + WRITERS_WAIT_MILLIS / 1000 + " s; open it again once"
            + " they ended (pg_stat_activity lists them, application name dataclay-store)");
      }
      try (PreparedStatement s = c.prepareStatement("SELECT pg_advisory_unlock(?)")) {
        s.setLong(1, writers);
        s.execute();
      }
      return new BackendLock(c);
    } catch (SQLException e) {
      ConnectionPool.closeQuietly(c);
      throw new InvalidArgumentException("cannot lock backend '" + backend + "' in " + shownUrl + ": " + e.getMessage());
    } catch (InterruptedException e) {
      ConnectionPool.closeQuietly(c);
      Thread.currentThread().interrupt();
      throw new InvalidArgumentException("interrupted while locking backend '" + backend + "' in " + shownUrl);
    } catch (RuntimeException e) {
      ConnectionPool.closeQuietly(c);
      throw e;
    }
  }

  /**
   * What each connection of the store's pool runs first: it takes the shared lock of {@code
   * backend}'s writers, held until the session ends.
   */
  static String writerSessionSql(String backend) {
    return "SELECT pg_advisory_lock_shared(" + key(WRITERS, backend) + ")";
  }

  // Takes the exclusive advisory lock `key` on `c`, retrying until `waitMillis` passed: whether it did.
  private static boolean tryFor(Connection c, long key, long waitMillis) throws SQLException, InterruptedException {
    try (PreparedStatement s = c.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
      s.setLong(1, key);
      long deadline = System.nanoTime() + waitMillis * 1_000_000;
      while (true) {
        try (ResultSet r = s.executeQuery()) {
          if (r.next() && r.getBoolean(1)) {
            return true;
          }
        }
        if (System.nanoTime() > deadline) {
          return false;
        }
        Thread.sleep(RETRY_MILLIS);
      }
    }
  }

  private static long key(String kind, String backend) {
    return UUID.nameUUIDFromBytes((kind + backend).getBytes(StandardCharsets.UTF_8)).getMostSignificantBits();
  }

  /** Releases the lock by ending its session. */
  @Override
  public void close() {
    ConnectionPool.closeQuietly(connection);
  }
}
