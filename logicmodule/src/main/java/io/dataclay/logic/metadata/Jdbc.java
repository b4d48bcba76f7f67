package io.dataclay.logic.metadata;

import com.zaxxer.hikari.HikariDataSource;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The tiny JDBC helper every store shares: runs a unit of work as one transaction on a connection
 * of the pool. SQL failures surface as {@link InternalException} (and are logged).
 */
final class Jdbc {
  private static final Logger LOG = Logger.getLogger(Jdbc.class.getName());

  /** A unit of work on a connection inside a transaction. */
  interface Work<T> {
    T run(SqlConnection c) throws SQLException;
  }

  private final HikariDataSource pool;
  private final SqlDialect dialect;
  // each database connection's prepared statements, kept across borrowings (the pool closes those
  // made through its handles); the pool holds at most dialect.poolSize() connections at a time
  private final Map<Connection, Map<String, PreparedStatement>> statements = new ConcurrentHashMap<>();

  Jdbc(HikariDataSource pool, SqlDialect dialect) {
    this.pool = pool;
    this.dialect = dialect;
  }

  SqlDialect dialect() {
    return dialect;
  }

  /**
   * Runs {@code work} in one transaction: committed when it returns, rolled back when it throws
   * (a dataClay exception thrown by the work passes through unchanged, after the rollback).
   */
  <T> T transaction(Work<T> work) {
    Connection handle;
    Connection physical;
    try {
      handle = pool.getConnection();
    } catch (SQLException e) {
      throw failure(e);
    }
    try {
      physical = handle.unwrap(Connection.class);
    } catch (SQLException | RuntimeException e) {
      pool.evictConnection(handle);
      throw e instanceof SQLException s ? failure(s) : (RuntimeException) e;
    }
    SqlConnection c = new SqlConnection(handle, physical, statementsOf(physical));
    boolean broken = false;
    try {
      T result = work.run(c);
      c.commit();
      return result;
    } catch (SQLException e) {
      c.forgetStatements();
      broken = !c.rollback() || isConnectionFailure(e);
      throw failure(e);
    } catch (RuntimeException | Error e) {
      broken = !c.rollback();
      throw e;
    } finally {
      if (broken) {
        c.forgetStatements();
        statements.remove(physical);
        // closes the database connection now; the pool opens a fresh one when one is next needed
        pool.evictConnection(handle);
      } else {
        close(handle);
      }
    }
  }

  /** Forgets every kept statement (the pool is closing their connections). */
  void close() {
    statements.clear();
  }

  private Map<String, PreparedStatement> statementsOf(Connection physical) {
    Map<String, PreparedStatement> kept = statements.get(physical);
    if (kept == null) {
      // a new database connection: drop what was kept for connections the pool has since closed
      statements.keySet().removeIf(Jdbc::isClosed);
      kept = new HashMap<>();
      statements.put(physical, kept);
    }
    return kept;
  }

  private static boolean isClosed(Connection c) {
    try {
      return c.isClosed();
    } catch (SQLException e) {
      return true;
    }
  }

  private static void close(Connection handle) {
    try {
      handle.close();
    } catch (SQLException e) {
      LOG.log(Level.FINE, "returning a metadata database connection to the pool failed", e);
    }
  }

  private static boolean isConnectionFailure(SQLException e) {
    String state = e.getSQLState();
    return state != null && state.startsWith("08");
  }

  private static DataClayException failure(SQLException e) {
    LOG.log(Level.WARNING, "metadata database error", e);
    return new InternalException("metadata database error: " + e.getMessage());
  }
}
