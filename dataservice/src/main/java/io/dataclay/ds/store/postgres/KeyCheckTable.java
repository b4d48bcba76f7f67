package io.dataclay.ds.store.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The key checks of the encrypted backends' stores in one database: one row per backend whose
 * store was made with a store key (see {@link io.dataclay.ds.store.crypt.StoreKey}); a backend
 * without a row stores its values unencrypted. The table is made when the first encrypted store is.
 */
final class KeyCheckTable {
  static final String TABLE = "dataclay_store_keys";

  private static final String CREATE = "CREATE TABLE IF NOT EXISTS " + TABLE
      + " (backend text PRIMARY KEY, key_check text NOT NULL)";

  private KeyCheckTable() {}

  /** The key check recorded for {@code backend}, or null when it has none (or the table does not exist). */
  static String recorded(Connection c, String backend) throws SQLException {
    if (!ObjectTable.exists(c, TABLE)) {
      return null;
    }
    try (PreparedStatement s = c.prepareStatement("SELECT key_check FROM " + TABLE + " WHERE backend = ?")) {
      s.setString(1, backend);
      try (ResultSet r = s.executeQuery()) {
        return r.next() ? r.getString(1) : null;
      }
    }
  }

  /** Records {@code check} as {@code backend}'s (auto-commit; the caller holds the backend's lock). */
  static void record(Connection c, String backend, String check) throws SQLException {
    if (!ObjectTable.exists(c, TABLE)) {
      try (Statement s = c.createStatement()) {
        s.execute(CREATE);
      } catch (SQLException e) {
        if (!ObjectTable.exists(c, TABLE)) { // two backends creating it at once: the loser finds it made
          throw e;
        }
      }
    }
    try (PreparedStatement s = c.prepareStatement("INSERT INTO " + TABLE + " (backend, key_check) VALUES (?, ?)")) {
      s.setString(1, backend);
      s.setString(2, check);
      s.executeUpdate();
    }
  }

  /** Deletes {@code backend}'s row, if any; returns whether there was one. */
  static boolean delete(Connection c, String backend) throws SQLException {
    if (!ObjectTable.exists(c, TABLE)) {
      return false;
    }
    try (PreparedStatement s = c.prepareStatement("DELETE FROM " + TABLE + " WHERE backend = ?")) {
      s.setString(1, backend);
      return s.executeUpdate() == 1;
    }
  }
}
