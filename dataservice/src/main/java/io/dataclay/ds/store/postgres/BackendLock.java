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
 */
final class BackendLock implements AutoCloseable {
  private static final long WAIT_MILLIS = 3000;
  private static final long RETRY_MILLIS = 100;

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
    long key = UUID.nameUUIDFromBytes(("dataclay-store:" + backend).getBytes(StandardCharsets.UTF_8))
        .getMostSignificantBits();
    try (PreparedStatement s = c.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
      s.setLong(1, key);
      long deadline = System.nanoTime() + WAIT_MILLIS * 1_000_000;
      while (true) {
        try (ResultSet r = s.executeQuery()) {
          if (r.next() && r.getBoolean(1)) {
            return new BackendLock(c);
          }
        }
        if (System.nanoTime() > deadline) {
          throw new InvalidArgumentException("the store of backend '" + backend + "' in " + shownUrl
              + " is already open in another Data Service (its PostgreSQL advisory lock is held)");
        }
        Thread.sleep(RETRY_MILLIS);
      }
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

  /** Releases the lock by ending its session. */
  @Override
  public void close() {
    ConnectionPool.closeQuietly(connection);
  }
}
