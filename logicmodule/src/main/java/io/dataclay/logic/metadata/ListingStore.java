package io.dataclay.logic.metadata;

import io.dataclay.common.Language;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Pages of datasets, aliases and objects, in the database's order of their keys, each read
 * strictly after the key the previous page ended at (keyset paging: a page costs its own rows,
 * however deep into a listing it is). Nothing here checks access: the caller asks only for
 * datasets the session may see.
 */
public final class ListingStore {
  private final Jdbc jdbc;

  ListingStore(Jdbc jdbc) {
    this.jdbc = jdbc;
  }

  /** A dataset and its owner. */
  public record DatasetRow(String name, String owner) {}

  /** An alias with the object it names. */
  public record AliasRow(String dataset, String alias, String objectId, String className, Language language,
      String masterBackendId) {}

  /** Up to {@code limit} datasets whose names sort after {@code after} ("": from the first), by name. */
  public List<DatasetRow> datasetsAfter(String after, int limit) {
    return jdbc.transaction(c -> c.query("SELECT name, owner FROM datasets WHERE name > ? ORDER BY name LIMIT ?",
        rs -> new DatasetRow(rs.getString(1), rs.getString(2)), after, limit));
  }

  /** Up to {@code limit} dataset names from {@code from} on (itself too when {@code inclusive}), by name. */
  public List<String> datasetNames(String from, boolean inclusive, int limit) {
    String sql = "SELECT name FROM datasets WHERE name " + (inclusive ? ">=" : ">") + " ? ORDER BY name LIMIT ?";
    return jdbc.transaction(c -> c.query(sql, rs -> rs.getString(1), from, limit));
  }

  /** The owners of those of {@code names} that exist, in the order given. */
  public Map<String, String> owners(List<String> names) {
    return jdbc.transaction(c -> {
      Map<String, String> out = new LinkedHashMap<>();
      for (String name : names) {
        Optional<String> owner = c.queryOne("SELECT owner FROM datasets WHERE name = ?", rs -> rs.getString(1), name);
        owner.ifPresent(o -> out.put(name, o));
      }
      return out;
    });
  }

  /** Objects registered in each of {@code datasets} (versions included), in the order given. */
  public Map<String, Long> objectCounts(List<String> datasets) {
    return jdbc.transaction(c -> {
      Map<String, Long> out = new LinkedHashMap<>();
      for (String dataset : datasets) {
        out.put(dataset, c.queryLong("SELECT COUNT(*) FROM objects WHERE dataset = ?", dataset));
      }
      return out;
    });
  }

  /**
   * Up to {@code limit} aliases of {@code dataset} that sort after {@code after} ("": from the
   * first) and match {@code glob} (null: all; see {@link SqlDialect#globPattern}), by alias.
   */
  public List<AliasRow> aliases(String dataset, String glob, String after, int limit) {
    SqlDialect dialect = jdbc.dialect();
    String sql = "SELECT a.alias, a.object_id, o.class_name, o.language, o.master_backend_id FROM aliases a"
        + " JOIN objects o ON o.id = a.object_id WHERE a.dataset = ? AND a.alias > ?"
        + (glob == null ? "" : " AND " + dialect.globCondition("a.alias")) + " ORDER BY a.alias LIMIT ?";
    Object[] args = glob == null ? new Object[] {dataset, after, limit}
        : new Object[] {dataset, after, dialect.globPattern(glob), limit};
    return jdbc.transaction(c -> c.query(sql, rs -> new AliasRow(dataset, rs.getString(1), rs.getString(2),
        rs.getString(3), Language.valueOf(rs.getString(4)), rs.getString(5)), args));
  }

  /**
   * Up to {@code limit} objects of {@code dataset} after ({@code afterClass}, {@code afterId})
   * ("", "": from the first), by class name then ID; only of {@code className} unless it is null.
   * Each comes with its replicas and its aliases (those of its own dataset).
   */
  public List<ObjectRecord> objects(String dataset, String className, String afterClass, String afterId, int limit) {
    String columns = "SELECT id, class_name, language, master_backend_id, version_of, dataset FROM objects"
        + " WHERE dataset = ?";
    return jdbc.transaction(c -> {
      List<String[]> rows = className != null
          ? c.query(columns + " AND class_name = ? AND id > ? ORDER BY id LIMIT ?", ListingStore::objectRow, dataset,
              className, className.equals(afterClass) ? afterId : "", limit)
          : c.query(columns + " AND (class_name > ? OR (class_name = ? AND id > ?)) ORDER BY class_name, id LIMIT ?",
              ListingStore::objectRow, dataset, afterClass, afterClass, afterId, limit);
      return withCopiesAndAliases(c, rows);
    });
  }

  /**
   * Up to {@code limit} versions of object {@code versionOf}, in every dataset, after ({@code
   * afterDataset}, {@code afterClass}, {@code afterId}) ("", "", "": from the first), by dataset,
   * class name then ID; each with its replicas and its aliases (those of its own dataset). Read
   * through the index on version_of: an object has few versions, however many objects its dataset has.
   */
  public List<ObjectRecord> versions(String versionOf, String afterDataset, String afterClass, String afterId,
      int limit) {
    // Only version_of narrows the query: given a dataset or a class too, SQLite would choose the
    // (dataset, class_name) index and read the whole dataset; the caller filters those instead.
    return jdbc.transaction(c -> withCopiesAndAliases(c, c.query("SELECT id, class_name, language, master_backend_id,"
        + " version_of, dataset FROM objects WHERE version_of = ? AND (dataset > ? OR (dataset = ?"
        + " AND (class_name > ? OR (class_name = ? AND id > ?)))) ORDER BY dataset, class_name, id LIMIT ?",
        ListingStore::objectRow, versionOf, afterDataset, afterDataset, afterClass, afterClass, afterId, limit)));
  }

  private static List<ObjectRecord> withCopiesAndAliases(SqlConnection c, List<String[]> rows)
      throws java.sql.SQLException {
    List<ObjectRecord> out = new ArrayList<>(rows.size());
    for (String[] r : rows) {
      List<String> replicas = c.query("SELECT backend_id FROM object_replicas WHERE object_id = ?"
          + " ORDER BY backend_id", rs -> rs.getString(1), r[0]);
      List<String> aliases = c.query("SELECT alias FROM aliases WHERE object_id = ? AND dataset = ? ORDER BY alias",
          rs -> rs.getString(1), r[0], r[5]);
      out.add(new ObjectRecord(r[0], r[1], Language.valueOf(r[2]), r[5], r[3], replicas, aliases,
          r[4] == null ? "" : r[4]));
    }
    return out;
  }

  private static String[] objectRow(java.sql.ResultSet rs) throws java.sql.SQLException {
    return new String[] {rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
        rs.getString(6)};
  }
}
