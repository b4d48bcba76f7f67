package io.dataclay.ds.store.postgres;

import io.dataclay.common.Language;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoredObject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import org.postgresql.PGStatement;

/**
 * The postgres engine's table and its statements. One table holds the objects of every backend
 * that uses the database, one row per object, keyed by (backend, id): the header in columns
 * (readable with SQL) and the whole record ({@link io.dataclay.ds.store.engine.RecordCodec}) in a
 * bytea stored uncompressed out of line (pickled values rarely compress, and compressing costs
 * more than it saves). Nothing here commits: the caller owns the transaction.
 */
final class ObjectTable {
  static final String TABLE = "dataclay_objects";

  private static final String CREATE = "CREATE TABLE IF NOT EXISTS " + TABLE + " ("
      + "backend text NOT NULL, id uuid NOT NULL, class_name text NOT NULL, language smallint NOT NULL, "
      + "dataset text NOT NULL, version_of text, master text, record bytea NOT NULL, "
      + "PRIMARY KEY (backend, id))";
  private static final String UNCOMPRESSED = "ALTER TABLE " + TABLE + " ALTER COLUMN record SET STORAGE EXTERNAL";
  private static final String UPSERT = "INSERT INTO " + TABLE
      + " (backend, id, class_name, language, dataset, version_of, master, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
      + " ON CONFLICT (backend, id) DO UPDATE SET class_name = EXCLUDED.class_name, language = EXCLUDED.language,"
      + " dataset = EXCLUDED.dataset, version_of = EXCLUDED.version_of, master = EXCLUDED.master,"
      + " record = EXCLUDED.record";
  private static final String SELECT_RECORD = "SELECT record FROM " + TABLE + " WHERE backend = ? AND id = ?";
  private static final String UPDATE_RECORD = "UPDATE " + TABLE + " SET record = ? WHERE backend = ? AND id = ?";
  private static final String DELETE = "DELETE FROM " + TABLE + " WHERE backend = ? AND id = ?";
  private static final String SCAN = "SELECT id, class_name, language, dataset, version_of, master, octet_length(record)"
      + " FROM " + TABLE + " WHERE backend = ?";

  /** Receives each row found by {@link #scan}. */
  interface Row {
    /** One stored object: its ID, header and record length. */
    void accept(UUID id, ObjectHeader header, long recordBytes);
  }

  private final String backend;

  ObjectTable(String backend) {
    this.backend = backend;
  }

  /**
   * Creates the table when it does not exist yet (in auto-commit mode). Two backends creating it
   * at once may collide in the catalog; the loser finds it made and goes on.
   */
  static void create(Connection c) throws SQLException {
    if (exists(c, TABLE)) {
      return;
    }
    c.setAutoCommit(false);
    try (Statement s = c.createStatement()) {
      s.execute(CREATE);
      s.execute(UNCOMPRESSED);
      c.commit();
    } catch (SQLException e) {
      c.rollback();
      if (!exists(c, TABLE)) {
        throw e;
      }
    } finally {
      c.setAutoCommit(true);
    }
  }

  /** Whether the table {@code name} (one of this package's constants, never user input) exists. */
  static boolean exists(Connection c, String name) throws SQLException {
    try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT to_regclass('" + name + "')")) {
      return r.next() && r.getString(1) != null;
    }
  }

  /** Whether this backend has no row (also when the table does not exist yet). */
  boolean isEmpty(Connection c) throws SQLException {
    if (!exists(c, TABLE)) {
      return true;
    }
    try (PreparedStatement s = c.prepareStatement("SELECT 1 FROM " + TABLE + " WHERE backend = ? LIMIT 1")) {
      s.setString(1, backend);
      try (ResultSet r = s.executeQuery()) {
        return !r.next();
      }
    }
  }

  /** Deletes every row of this backend; returns how many there were. */
  int deleteAll(Connection c) throws SQLException {
    if (!exists(c, TABLE)) {
      return 0;
    }
    try (PreparedStatement s = c.prepareStatement("DELETE FROM " + TABLE + " WHERE backend = ?")) {
      s.setString(1, backend);
      return s.executeUpdate();
    }
  }

  /** Inserts or replaces the rows of {@code objects} with {@code records} (their encodings); returns null. */
  Void upsert(Connection c, List<StoredObject> objects, byte[][] records) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(UPSERT)) {
      for (int i = 0; i < records.length; i++) {
        ObjectHeader h = objects.get(i).header();
        s.setString(1, backend);
        s.setObject(2, objects.get(i).id());
        s.setString(3, h.className());
        s.setShort(4, (short) (h.language() == Language.PYTHON ? 1 : 2));
        s.setString(5, h.dataset());
        s.setString(6, h.versionOf());
        s.setString(7, h.masterBackendId());
        s.setBytes(8, records[i]);
        if (records.length == 1) {
          s.executeUpdate();
        } else {
          s.addBatch();
        }
      }
      if (records.length > 1) {
        s.executeBatch();
      }
    }
    return null;
  }

  /**
   * The record of {@code id}, or null. Read in PostgreSQL's binary form: its text form of a bytea (hex)
   * is twice the record, so a record over 512 MiB, which is stored, could not be read back (the server
   * refuses a value past 1 GB: "invalid memory alloc request size").
   */
  byte[] record(Connection c, UUID id) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(SELECT_RECORD)) {
      s.unwrap(PGStatement.class).setPrepareThreshold(-1); // pgjdbc: -1 forces the binary form from the first use
      s.setString(1, backend);
      s.setObject(2, id);
      try (ResultSet r = s.executeQuery()) {
        return r.next() ? r.getBytes(1) : null;
      }
    }
  }

  /** Replaces the record of {@code id}; returns whether the row exists. */
  boolean updateRecord(Connection c, UUID id, byte[] record) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(UPDATE_RECORD)) {
      s.setBytes(1, record);
      s.setString(2, backend);
      s.setObject(3, id);
      return s.executeUpdate() == 1;
    }
  }

  /** Deletes the row of {@code id}; returns whether there was one. */
  boolean delete(Connection c, UUID id) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(DELETE)) {
      s.setString(1, backend);
      s.setObject(2, id);
      return s.executeUpdate() == 1;
    }
  }

  /** Streams every row of this backend's objects (ID, header, record length) to {@code row}. */
  void scan(Connection c, Row row) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(SCAN)) {
      s.setFetchSize(10_000); // a cursor: the rows of a large store are not all held at once
      s.setString(1, backend);
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) {
          Language language = r.getShort(3) == 1 ? Language.PYTHON : Language.JAVA;
          ObjectHeader header = new ObjectHeader(r.getString(2), language, r.getString(4), r.getString(5), r.getString(6));
          row.accept(r.getObject(1, UUID.class), header, r.getLong(7));
        }
      }
    }
  }
}
