package io.dataclay.ds.store.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.exceptions.InvalidArgumentException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * Up to a fixed number of JDBC connections to one PostgreSQL database (a HikariCP pool), lent out
 * one caller at a time. Connections are opened lazily, in auto-commit mode (a single statement is
 * its own transaction, with no extra round trip for a commit); {@link #transaction} runs several
 * statements as one. The pool checks a connection that sat idle before lending it, and one that
 * failed is checked when it comes back and evicted if it is broken, so a database restart costs
 * the calls in flight and nothing more. Messages name the database by its URL with the password
 * hidden.
 */
final class ConnectionPool implements AutoCloseable {
  /** How long a call waits for a free connection, or for a new one while the database is down. */
  private static final long BORROW_TIMEOUT_SECONDS = 10;
  private static final int VALID_CHECK_SECONDS = 2;

  private final String url;
  private final String shownUrl;
  private final HikariDataSource connections;

  /**
   * Up to {@code size} connections to {@code url}, none opened yet, each holding the shared lock of
   * {@code backend}'s writers for its whole session ({@link BackendLock}).
   */
  ConnectionPool(String url, int size, String backend) {
    this.url = url;
    this.shownUrl = StoreConfig.redact(url);
    HikariConfig config = new HikariConfig();
    config.setPoolName("dataclay-store");
    config.setDriverClassName(org.postgresql.Driver.class.getName());
    config.setJdbcUrl(url);
    config.setDataSourceProperties(properties());
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(0); // opened when first needed, as the open and erase paths expect
    config.setInitializationFailTimeout(-1); // no connection at construction: BackendLock reports an unreachable database
    config.setConnectionTimeout(TimeUnit.SECONDS.toMillis(BORROW_TIMEOUT_SECONDS));
    config.setAutoCommit(true);
    config.setConnectionInitSql(BackendLock.writerSessionSql(backend));
    this.connections = new HikariDataSource(config);
  }

  /** The database's URL with its password hidden, for messages. */
  String shownUrl() {
    return shownUrl;
  }

  private Properties properties() {
    Properties properties = new Properties();
    if (!url.contains("connectTimeout=")) {
      properties.setProperty("connectTimeout", "10");
    }
    if (!url.contains("ApplicationName=")) {
      properties.setProperty("ApplicationName", "dataclay-store");
    }
    return properties;
  }

  /**
   * Opens a new connection (auto-commit) of its own, outside the pool: for a session whose state
   * must not be lent to others (the backend's advisory lock).
   *
   * @throws SQLException when the database cannot be reached or refuses the login
   */
  Connection connect() throws SQLException {
    Connection c = new org.postgresql.Driver().connect(url, properties());
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
   * @throws SQLException what the work or the commit threw, or that no connection was had in time
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
   * Runs {@code work} on a connection of the pool in auto-commit mode, waiting up to
   * {@value #BORROW_TIMEOUT_SECONDS} s for one. When the connection turns out to be dead (the
   * database restarted, or cut it), the work runs once more on another; so work must be
   * idempotent, as every call of the postgres engine is (an upsert, a delete, a read, or a delta
   * re-applied to the row it finds).
   *
   * @throws SQLException what the work threw, after the connection was rolled back; or, when no
   *     connection was had in time, the pool's error (its SQL state that of the last failure to
   *     connect, e.g. 08001)
   */
  <T> T with(Work<T> work) throws SQLException {
    for (int attempt = 1; ; attempt++) {
      try (Connection c = connections.getConnection()) {
        try {
          return work.run(c);
        } catch (SQLException | RuntimeException e) {
          boolean dropped = rollbackOrEvict(c);
          if (!dropped || attempt > 1 || !(e instanceof SQLException)) {
            throw e;
          }
        }
      }
    }
  }

  /** Closes every connection; borrowing afterwards fails. */
  @Override
  public void close() {
    connections.close();
  }

  /** Rolls back what the failed work left open; evicts the connection and returns true when it is dead. */
  private boolean rollbackOrEvict(Connection c) {
    try {
      if (c.isValid(VALID_CHECK_SECONDS)) {
        if (!c.getAutoCommit()) {
          c.rollback();
          c.setAutoCommit(true);
        }
        return false;
      }
    } catch (SQLException e) {
      // Broken: evicted below; the pool opens another when one is needed.
    }
    connections.evictConnection(c);
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
