package io.dataclay.logic.metadata;

import io.dataclay.common.PrivatePaths;
import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

/**
 * The only place where SQLite and PostgreSQL differ: how to connect, session pragmas, the binary
 * column type, how many connections to keep, and how a glob pattern matches text. All other SQL is
 * written once for both.
 */
enum SqlDialect {
  SQLITE("BLOB", 1),
  POSTGRESQL("BYTEA", 8);

  private static final int SQLITE_BUSY_TIMEOUT_MS = 5000;
  /** Page cache of the one SQLite connection (the default 2 MiB thrashes on a million objects). */
  private static final int SQLITE_CACHE_KIB = 64 * 1024;

  private final String bytesType;
  private final int poolSize;

  SqlDialect(String bytesType, int poolSize) {
    this.bytesType = bytesType;
    this.poolSize = poolSize;
  }

  /** The dialect of a JDBC URL. */
  static SqlDialect of(String url) {
    if (url.startsWith("jdbc:sqlite:")) {
      return SQLITE;
    }
    if (url.startsWith("jdbc:postgresql:")) {
      return POSTGRESQL;
    }
    throw new IllegalArgumentException("unsupported metadata URL (use jdbc:sqlite: or jdbc:postgresql:): "
        + redact(url));
  }

  /** Column type for byte strings. */
  String bytesType() {
    return bytesType;
  }

  /** Most connections the pool holds: SQLite serialises writers anyway, so it has one, which callers take in turn. */
  int poolSize() {
    return poolSize;
  }

  /**
   * A condition true when {@code column} matches the one bound parameter, a pattern made by {@link
   * #globPattern}. SQLite's LIKE ignores case, PostgreSQL's does not: SQLite uses GLOB (which
   * respects case) and PostgreSQL LIKE, so that both match the same rows.
   */
  String globCondition(String column) {
    return this == SQLITE ? column + " GLOB ?" : column + " LIKE ? ESCAPE '!'";
  }

  /**
   * The pattern for {@link #globCondition} of a user's glob, where '*' stands for any run of
   * characters, '?' for one character, and every other character for itself: the characters
   * this dialect's matching would read otherwise are escaped (SQLite GLOB: '[' as "[[]";
   * PostgreSQL LIKE: '%', '_' and the escape character '!' after a '!'). Quotes and backslashes
   * need nothing: the pattern is a bound parameter, never part of the SQL text.
   */
  String globPattern(String glob) {
    StringBuilder out = new StringBuilder(glob.length() + 8);
    for (int i = 0; i < glob.length(); i++) {
      char ch = glob.charAt(i);
      if (this == SQLITE) {
        out.append(ch == '[' ? "[[]" : String.valueOf(ch));
      } else if (ch == '*') {
        out.append('%');
      } else if (ch == '?') {
        out.append('_');
      } else {
        if (ch == '%' || ch == '_' || ch == '!') {
          out.append('!');
        }
        out.append(ch);
      }
    }
    return out.toString();
  }

  /** Opens a configured connection in manual-commit mode. */
  Connection connect(String url, MetadataSync sync) throws SQLException {
    Driver driver;
    if (this == SQLITE) {
      prepareFile(url);
      driver = new org.sqlite.JDBC();
    } else {
      driver = new org.postgresql.Driver();
    }
    Connection c = driver.connect(url, new Properties());
    if (c == null) {
      throw new SQLException("the JDBC driver does not accept the URL " + redact(url));
    }
    try {
      if (this == SQLITE) {
        try (Statement s = c.createStatement()) {
          // WAL: a commit is appended to the log; NORMAL syncs the log at checkpoints only, so a
          // killed process loses nothing (the OS has the pages) but a power loss may lose the tail.
          s.execute("PRAGMA journal_mode=WAL");
          s.execute("PRAGMA synchronous=" + (sync == MetadataSync.FULL ? "FULL" : "NORMAL"));
          s.execute("PRAGMA busy_timeout=" + SQLITE_BUSY_TIMEOUT_MS);
          s.execute("PRAGMA foreign_keys=ON");
          s.execute("PRAGMA cache_size=-" + SQLITE_CACHE_KIB);
        }
      }
      c.setAutoCommit(false);
      return c;
    } catch (SQLException e) {
      c.close();
      throw e;
    }
  }

  /** The URL without its query string, which may hold a password. */
  static String redact(String url) {
    int q = url.indexOf('?');
    return q < 0 ? url : url.substring(0, q) + "?...";
  }

  /**
   * Makes the database's directory private (0700) and the database file 0600 before SQLite first
   * opens it, and refuses those files when another user owns them or could reach them: they hold
   * the accounts' password hashes. SQLite makes a new database file 0644 (less the umask), but gives
   * its -wal, -shm and -journal files the mode of the database file, so an empty file made 0600
   * here (which SQLite takes as a new, empty database) keeps all of them 0600.
   */
  private static void prepareFile(String url) throws SQLException {
    String file = url.substring("jdbc:sqlite:".length());
    int q = file.indexOf('?');
    if (q >= 0) {
      file = file.substring(0, q);
    }
    if (file.isEmpty() || file.equals(":memory:") || file.startsWith("file:")) {
      return;
    }
    Path db = Paths.get(file).toAbsolutePath();
    try {
      PrivatePaths.directory(db.getParent(), "the metadata database's directory");
      for (String suffix : new String[] {"-wal", "-shm", "-journal"}) {
        PrivatePaths.checkFile(db.resolveSibling(db.getFileName() + suffix), "the metadata database file");
      }
      if (!PrivatePaths.checkFile(db, "the metadata database")) {
        try {
          Files.createFile(db, PrivatePaths.FILE);
        } catch (FileAlreadyExistsException e) {
          PrivatePaths.checkFile(db, "the metadata database"); // made meanwhile: by whom?
        }
      }
    } catch (InvalidArgumentException e) {
      throw new SQLException(e.getMessage(), e);
    } catch (java.io.IOException | SecurityException e) {
      throw new SQLException("cannot create the metadata database " + db + ": " + e.getMessage(), e);
    }
  }
}
