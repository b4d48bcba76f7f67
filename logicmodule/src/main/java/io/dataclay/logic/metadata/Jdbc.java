package io.dataclay.logic.metadata;

import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import java.sql.SQLException;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The tiny JDBC helper every store shares: runs a unit of work as one transaction on a pooled
 * connection. SQL failures surface as {@link InternalException} (and are logged).
 */
final class Jdbc {
  private static final Logger LOG = Logger.getLogger(Jdbc.class.getName());

  /** A unit of work on a connection inside a transaction. */
  interface Work<T> {
    T run(PooledConnection c) throws SQLException;
  }

  private final ConnectionPool pool;
  private final SqlDialect dialect;

  Jdbc(ConnectionPool pool, SqlDialect dialect) {
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
    PooledConnection c;
    try {
      c = pool.acquire();
    } catch (SQLException e) {
      throw failure(e);
    }
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
      pool.release(c, broken);
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
