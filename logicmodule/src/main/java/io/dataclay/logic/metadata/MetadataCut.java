package io.dataclay.logic.metadata;

import io.dataclay.exceptions.InternalException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * The metadata as it was at one moment, for a snapshot (docs/internals.md "Snapshots"): a
 * read-only transaction on a connection of its own, whose view is fixed by its first read (SQLite
 * in WAL mode: a read transaction; PostgreSQL: REPEATABLE READ). Other connections keep writing.
 * Every query takes an optional dataset (null: all) to which the view is limited. One thread at a
 * time; close it when done (an open view makes SQLite's log grow).
 */
public final class MetadataCut implements AutoCloseable {
  private static final int FETCH_ROWS = 10_000;
  /** Accounts that exist in every cluster and are never exported. */
  private static final List<String> SYSTEM_ACCOUNTS = List.of("_dataclay_system", "_dataclay_backends");

  /** A registered object's master backend and replica backends. */
  public record ObjectCopies(String id, String master, List<String> replicas) {}

  /** A dataset and its owner. */
  public record Dataset(String name, String owner) {}

  /** An alias naming an object in a dataset. */
  public record Alias(String dataset, String alias, String objectId) {}

  private final Connection connection;
  private final SqlConnection c;

  private MetadataCut(Connection connection) {
    this.connection = connection;
    this.c = new SqlConnection(connection);
  }

  static MetadataCut open(SqlDialect dialect, String url, MetadataSync sync) {
    Connection conn = null;
    try {
      conn = dialect.connect(url, sync);
      if (dialect == SqlDialect.POSTGRESQL) {
        conn.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      }
      MetadataCut cut = new MetadataCut(conn);
      cut.c.queryLong("SELECT COUNT(*) FROM schema_version"); // the first read fixes the view
      return cut;
    } catch (SQLException e) {
      if (conn != null) {
        try {
          conn.close();
        } catch (SQLException ignored) {
          // already failing
        }
      }
      throw new InternalException("cannot open a consistent view of the metadata: " + e.getMessage());
    }
  }

  /** Every registered model (models are not per dataset). */
  public List<ModelRecord> models() {
    return read(() -> ModelStore.list(c, null));
  }

  /**
   * The accounts: all but the system ones, or, for a dataset, its owner and its contracts'
   * beneficiaries. Hashes are blanked unless {@code withHashes}.
   */
  public List<AccountRecord> accounts(String dataset, boolean withHashes) {
    return read(() -> c.query("SELECT username, password_hash, password_salt, password_iterations, admin,"
            + " may_register_models FROM accounts WHERE username NOT IN (?, ?) AND (? IS NULL OR username IN"
            + " (SELECT owner FROM datasets WHERE name = ? UNION SELECT beneficiary FROM contracts WHERE dataset = ?))"
            + " ORDER BY username",
        rs -> withHashes
            ? new AccountRecord(rs.getString(1), rs.getString(2), rs.getString(3), rs.getInt(4), rs.getBoolean(5),
                rs.getBoolean(6))
            : new AccountRecord(rs.getString(1), "", "", 0, rs.getBoolean(5), rs.getBoolean(6)),
        SYSTEM_ACCOUNTS.get(0), SYSTEM_ACCOUNTS.get(1), dataset, dataset, dataset));
  }

  /** The datasets (or the one named) with their owners. */
  public List<Dataset> datasets(String dataset) {
    return read(() -> c.query("SELECT name, owner FROM datasets WHERE (? IS NULL OR name = ?)"
        + " AND owner NOT IN (?, ?) ORDER BY name", rs -> new Dataset(rs.getString(1), rs.getString(2)),
        dataset, dataset, SYSTEM_ACCOUNTS.get(0), SYSTEM_ACCOUNTS.get(1)));
  }

  /** The data contracts (or those on the dataset). */
  public List<ContractRecord> contracts(String dataset) {
    return read(() -> c.query("SELECT k.dataset, d.owner, k.beneficiary, k.read_only, k.begins_at_ms, k.expires_at_ms"
            + " FROM contracts k JOIN datasets d ON d.name = k.dataset WHERE (? IS NULL OR k.dataset = ?)"
            + " ORDER BY k.dataset, k.beneficiary",
        rs -> new ContractRecord(rs.getString(1), rs.getString(2), rs.getString(3), rs.getBoolean(4), rs.getLong(5),
            rs.getLong(6)),
        dataset, dataset));
  }

  /** The registered objects (or the dataset's) with their copies, by ID, read as the iterator advances. */
  public Iterator<ObjectCopies> objects(String dataset) {
    return rows(cursor("SELECT o.id, o.master_backend_id, r.backend_id FROM objects o LEFT JOIN object_replicas r"
        + " ON r.object_id = o.id WHERE (? IS NULL OR o.dataset = ?) ORDER BY o.id, r.backend_id", dataset), cursor -> {
          ResultSet rs = cursor.rs;
          String id = rs.getString(1);
          String master = rs.getString(2);
          List<String> replicas = new ArrayList<>(1);
          do {
            String replica = rs.getString(3);
            if (replica != null) {
              replicas.add(replica);
            }
          } while (cursor.next() && rs.getString(1).equals(id));
          return new ObjectCopies(id, master, replicas);
        });
  }

  /** The aliases (or the dataset's), read as the iterator advances. */
  public Iterator<Alias> aliases(String dataset) {
    return rows(cursor("SELECT dataset, alias, object_id FROM aliases WHERE (? IS NULL OR dataset = ?)"
        + " ORDER BY dataset, alias", dataset), cursor -> {
          Alias a = new Alias(cursor.rs.getString(1), cursor.rs.getString(2), cursor.rs.getString(3));
          cursor.next();
          return a;
        });
  }

  /** Ends the view and closes its connection. */
  @Override
  public void close() {
    try {
      connection.rollback();
    } catch (SQLException ignored) {
      // closing anyway
    }
    c.close();
  }

  private ResultSet cursor(String sql, String dataset) {
    return read(() -> {
      PreparedStatement ps = connection.prepareStatement(sql);
      ps.setFetchSize(FETCH_ROWS);
      SqlConnection.bind(ps, dataset, dataset);
      return ps.executeQuery();
    });
  }

  /** A result set and whether it stands on a row. */
  private static final class Cursor {
    final ResultSet rs;
    boolean onRow;

    Cursor(ResultSet rs) {
      this.rs = rs;
    }

    boolean next() throws SQLException {
      onRow = rs.next();
      return onRow;
    }
  }

  /** Reads one item from the cursor's row on, leaving the cursor on the next item's row or past the end. */
  private interface Item<T> {
    T read(Cursor cursor) throws SQLException;
  }

  /** The items of {@code rs}, each read by {@code item} as the iterator advances. */
  private static <T> Iterator<T> rows(ResultSet rs, Item<T> item) {
    Cursor cursor = new Cursor(rs);
    read(cursor::next);
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return cursor.onRow;
      }

      @Override
      public T next() {
        if (!cursor.onRow) {
          throw new NoSuchElementException();
        }
        return read(() -> item.read(cursor));
      }
    };
  }

  private interface Read<T> {
    T get() throws SQLException;
  }

  private static <T> T read(Read<T> body) {
    try {
      return body.get();
    } catch (SQLException e) {
      throw new InternalException("reading the metadata for a snapshot failed: " + e.getMessage());
    }
  }
}
