package io.dataclay.ds.store.postgres;

import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.InvalidArgumentException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A fixed number of JDBC connections to one PostgreSQL database, lent out one caller at a time.
 * Connections are opened lazily, in auto-commit mode (a single statement is its own transaction,
 * with no extra round trip for a commit); {@link #transaction} runs several statements as one.
 * A connection that failed is checked when it comes back and replaced if it is broken, so a database restart costs the calls in flight and
 * nothing more. Messages name the database by its URL with the password hidden.
 */
final class ConnectionPool implements AutoCloseable {
  private static final long BORROW_TIMEOUT_SECONDS = 30;
  private static final int VALID_CHECK_SECONDS = 2;

  private final String url;
  private final String shownUrl;
  private final BlockingQueue<Slot> idle;
  private final List<Slot> all = new ArrayList<>();

  /** One pooled connection (null until first used). */
  static final class Slot {
    private Connection connection;
  }

  ConnectionPool(String url, String shownUrl, int size) {
    this.url = url;
    this.shownUrl = shownUrl;
    this.idle = new ArrayBlockingQueue<>(size);
    for (int i = 0; i < size; i++) {
      Slot slot = new Slot();
      all.add(slot);
      idle.add(slot);
    }
  }

  /**
   * Opens a new connection (auto-commit).
   *
   * @throws SQLException when the database cannot be reached or refuses the login
   */
  Connection connect() throws SQLException {
    Properties properties = new Properties();
    if (!url.contains("connectTimeout=")) {
      properties.setProperty("connectTimeout", "10");
    }
    if (!url.contains("ApplicationName=")) {
      properties.setProperty("ApplicationName", "dataclay-store");
    }
    Connection c = new org.postgresql.Driver().connect(url, properties);
    if (c == null) {
      throw new InvalidArgumentException("'" + shownUrl + "' is not a PostgreSQL JDBC URL (jdbc:postgresql://host:port/database)");
    }
    return c;
  }

  /** Work done on a lent connection. */
  interface Work<T> {
    /** Runs on {@code connection}. */
    T run(Connection connection) throws SQLException;
  }

  /**
   * Runs {@code work} as one transaction, committed when it returns and rolled back when it throws.
   *
   * @throws SQLException what the work or the commit threw
   * @throws BackendUnavailableException when no connection is free in time or none can be opened
   */
  <T> T transaction(Work<T> work) throws SQLException {
    return with(c -> {
      c.setAutoCommit(false);
      T result = work.run(c);
      c.commit();
      c.setAutoCommit(true); // nothing is open after the commit: no round trip
      return result;
    });
  }

  /**
   * Runs {@code work} on a connection of the pool in auto-commit mode, waiting for one to be free.
   * When the connection turns out to be dead (the database restarted, or cut it), the work runs
   * once more on a new one; so work must be idempotent, as every call of the postgres engine is
   * (an upsert, a delete, a read, or a delta re-applied to the row it finds).
   *
   * @throws SQLException what the work threw, after the connection was rolled back
   * @throws BackendUnavailableException when no connection is free in time or none can be opened
   */
  <T> T with(Work<T> work) throws SQLException {
    Slot slot;
    try {
      slot = idle.poll(BORROW_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BackendUnavailableException("interrupted while waiting for a connection to " + shownUrl);
    }
    if (slot == null) {
      throw new BackendUnavailableException("no connection to " + shownUrl + " was free within "
          + BORROW_TIMEOUT_SECONDS + " s");
    }
    try {
      for (int attempt = 1; ; attempt++) {
        boolean fresh = slot.connection == null;
        if (fresh) {
          slot.connection = connect();
        }
        try {
          return work.run(slot.connection);
        } catch (SQLException | RuntimeException e) {
          boolean dropped = rollbackOrDrop(slot);
          if (!dropped || fresh || attempt > 1 || !(e instanceof SQLException)) {
            throw e;
          }
        }
      }
    } finally {
      idle.add(slot);
    }
  }

  /** Closes every connection; borrowing afterwards fails. */
  @Override
  public void close() {
    for (Slot slot : all) {
      closeQuietly(slot.connection);
      slot.connection = null;
    }
  }

  /** Rolls back what the failed work left open; drops the connection and returns true when it is dead. */
  private static boolean rollbackOrDrop(Slot slot) {
    Connection c = slot.connection;
    try {
      if (c != null && c.isValid(VALID_CHECK_SECONDS)) {
        if (!c.getAutoCommit()) {
          c.rollback();
          c.setAutoCommit(true);
        }
        return false;
      }
    } catch (SQLException e) {
      // Broken: dropped below and reopened by the next borrower.
    }
    closeQuietly(c);
    slot.connection = null;
    return true;
  }

  static void closeQuietly(Connection c) {
    if (c == null) {
      return;
    }
    try {
      c.close();
    } catch (SQLException e) {
      // Closing a broken connection may fail; it is gone either way.
    }
  }
}
