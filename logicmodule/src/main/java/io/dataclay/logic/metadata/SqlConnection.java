package io.dataclay.logic.metadata;

import io.dataclay.exceptions.InternalException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A connection borrowed for one transaction (inside {@link Jdbc#transaction}) or held by a
 * {@link MetadataCut}, with the statement helpers every store uses. Its prepared statements are
 * kept for reuse across borrowings of the same database connection (preparing costs as much as
 * running a small SQLite query; the pool itself keeps none). Used by one thread at a time.
 */
final class SqlConnection implements AutoCloseable {
  /** Maps the current row of a result set. */
  interface RowMapper<T> {
    T map(ResultSet rs) throws SQLException;
  }

  private final Connection connection;
  private final Connection physical;
  private final Map<String, PreparedStatement> statements;

  /**
   * {@code connection} commits, rolls back and closes; statements are prepared on {@code physical}
   * (the database connection under the pool's handle, so that closing the handle leaves them open)
   * and kept in {@code statements}, which belongs to {@code physical}.
   */
  SqlConnection(Connection connection, Connection physical, Map<String, PreparedStatement> statements) {
    this.connection = connection;
    this.physical = physical;
    this.statements = statements;
  }

  /** A connection of its own, not pooled: its statements live as long as this object. */
  SqlConnection(Connection connection) {
    this(connection, connection, new HashMap<>());
  }

  /** The prepared statement for {@code sql}, reused across calls; callers must not close it. */
  PreparedStatement prepare(String sql) throws SQLException {
    PreparedStatement ps = statements.get(sql);
    if (ps == null) {
      ps = physical.prepareStatement(sql);
      statements.put(sql, ps);
    }
    return ps;
  }

  /** Runs a statement with {@code args}; the number of rows it changed. */
  int update(String sql, Object... args) throws SQLException {
    PreparedStatement ps = prepare(sql);
    bind(ps, args);
    return ps.executeUpdate();
  }

  /** Runs one statement per row as a batch; the per-row counts the driver reports. */
  int[] batch(String sql, List<Object[]> rows) throws SQLException {
    if (rows.isEmpty()) {
      return new int[0];
    }
    PreparedStatement ps = prepare(sql);
    try {
      for (Object[] row : rows) {
        bind(ps, row);
        ps.addBatch();
      }
      return ps.executeBatch();
    } catch (SQLException | RuntimeException e) {
      // the statement is kept for reuse: it must not carry half a batch into the next call
      ps.clearBatch();
      throw e;
    }
  }

  /** Every row a query returns, mapped. */
  <T> List<T> query(String sql, RowMapper<T> mapper, Object... args) throws SQLException {
    PreparedStatement ps = prepare(sql);
    bind(ps, args);
    try (ResultSet rs = ps.executeQuery()) {
      List<T> rows = new ArrayList<>();
      while (rs.next()) {
        rows.add(mapper.map(rs));
      }
      return rows;
    }
  }

  /** The first row a query returns, mapped, if any. */
  <T> Optional<T> queryOne(String sql, RowMapper<T> mapper, Object... args) throws SQLException {
    PreparedStatement ps = prepare(sql);
    bind(ps, args);
    try (ResultSet rs = ps.executeQuery()) {
      return rs.next() ? Optional.of(mapper.map(rs)) : Optional.empty();
    }
  }

  /** A single number a query returns (a count). */
  long queryLong(String sql, Object... args) throws SQLException {
    return queryOne(sql, rs -> rs.getLong(1), args).orElse(0L);
  }

  /**
   * Inserts a row unless its unique key is taken: empty when this insert created it, else column 1
   * of {@code holderSql} for the row holding the key. {@code insertSql} must end in ON CONFLICT DO
   * NOTHING. Retries when the holder vanishes between the two statements (a concurrent delete).
   */
  Optional<String> claim(String insertSql, Object[] insertArgs, String holderSql, Object... keyArgs)
      throws SQLException {
    for (int attempt = 0; attempt < 3; attempt++) {
      if (update(insertSql, insertArgs) == 1) {
        return Optional.empty();
      }
      Optional<String> holder = queryOne(holderSql, rs -> rs.getString(1), keyArgs);
      if (holder.isPresent()) {
        return holder;
      }
    }
    throw new InternalException("a unique key kept changing under a concurrent writer: " + holderSql);
  }

  /** Runs DDL or a pragma. */
  void execute(String sql) throws SQLException {
    try (Statement s = connection.createStatement()) {
      s.execute(sql);
    }
  }

  void commit() throws SQLException {
    connection.commit();
  }

  /** Rolls back; false when even that failed (the connection is then unusable). */
  boolean rollback() {
    try {
      connection.rollback();
      return true;
    } catch (SQLException e) {
      return false;
    }
  }

  /** Drops the kept statements (after a failure, so none is reused in an unknown state). */
  void forgetStatements() {
    for (PreparedStatement ps : statements.values()) {
      try {
        ps.close();
      } catch (SQLException ignored) {
        // the statement is being discarded; failing to close it changes nothing
      }
    }
    statements.clear();
  }

  /** Closes the kept statements and the connection (a cut's own, or a handle that goes back to the pool). */
  @Override
  public void close() {
    forgetStatements();
    try {
      connection.close();
    } catch (SQLException ignored) {
      // the connection is being discarded; failing to close it changes nothing
    }
  }

  /** Binds positional arguments: String, Long, Integer, Boolean, byte[] or null (as text). */
  static void bind(PreparedStatement ps, Object... args) throws SQLException {
    for (int i = 0; i < args.length; i++) {
      Object a = args[i];
      int at = i + 1;
      if (a == null) {
        ps.setNull(at, Types.VARCHAR);
      } else if (a instanceof String) {
        ps.setString(at, (String) a);
      } else if (a instanceof Long) {
        ps.setLong(at, (Long) a);
      } else if (a instanceof Integer) {
        ps.setInt(at, (Integer) a);
      } else if (a instanceof Boolean) {
        ps.setBoolean(at, (Boolean) a);
      } else if (a instanceof byte[]) {
        ps.setBytes(at, (byte[]) a);
      } else {
        throw new IllegalArgumentException("cannot bind a " + a.getClass().getName());
      }
    }
  }
}
