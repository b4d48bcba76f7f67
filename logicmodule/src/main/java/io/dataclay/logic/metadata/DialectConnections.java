package io.dataclay.logic.metadata;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Where the pool gets its connections: each one opened and configured by the dialect (SQLite's
 * pragmas, manual commit), exactly as a connection of our own would be.
 */
final class DialectConnections implements DataSource {
  private final SqlDialect dialect;
  private final String url;
  private final MetadataSync sync;
  private int loginTimeoutSeconds;

  DialectConnections(SqlDialect dialect, String url, MetadataSync sync) {
    this.dialect = dialect;
    this.url = url;
    this.sync = sync;
  }

  /** A new connection, configured by the dialect. */
  @Override
  public Connection getConnection() throws SQLException {
    return dialect.connect(url, sync);
  }

  /** Credentials come with the URL only. */
  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException("the metadata database's credentials are part of its URL");
  }

  /** No log writer: failures surface as exceptions. */
  @Override
  public PrintWriter getLogWriter() {
    return null;
  }

  /** Ignored: failures surface as exceptions. */
  @Override
  public void setLogWriter(PrintWriter out) {
    // nothing to write to
  }

  /** Kept for the pool to read back; the drivers' own connect timeouts apply. */
  @Override
  public void setLoginTimeout(int seconds) {
    loginTimeoutSeconds = seconds;
  }

  /** What {@link #setLoginTimeout} was given. */
  @Override
  public int getLoginTimeout() {
    return loginTimeoutSeconds;
  }

  /** Not supported: this source logs nothing. */
  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException("no parent logger");
  }

  /** This source wraps nothing. */
  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) {
      return iface.cast(this);
    }
    throw new SQLException("not a wrapper of " + iface.getName());
  }

  /** True only for this class's own interfaces. */
  @Override
  public boolean isWrapperFor(Class<?> iface) {
    return iface.isInstance(this);
  }
}
