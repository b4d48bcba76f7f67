package io.dataclay.logic.metadata;

import io.dataclay.common.Language;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** Registered backends by their stable ID. Liveness is not stored: it lives in memory. */
public final class BackendStore {
  private final Jdbc jdbc;

  BackendStore(Jdbc jdbc) {
    this.jdbc = jdbc;
  }

  /** Adds the backend, or replaces the address and details of the one with its ID; durable when this returns. */
  public void upsert(BackendRecord b) {
    jdbc.transaction(c -> c.update("INSERT INTO backends (id, name, host, port, languages, store_engine)"
            + " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name,"
            + " host = excluded.host, port = excluded.port, languages = excluded.languages,"
            + " store_engine = excluded.store_engine",
        b.id(), b.name(), b.host(), b.port(), joinLanguages(b.languages()), b.storeEngine()));
  }

  /** Every registered backend, by name then ID. */
  public List<BackendRecord> all() {
    return jdbc.transaction(c -> c.query("SELECT id, name, host, port, languages, store_engine FROM backends"
        + " ORDER BY name, id", BackendStore::backend));
  }

  private static BackendRecord backend(ResultSet rs) throws SQLException {
    return new BackendRecord(rs.getString(1), rs.getString(2), rs.getString(3), rs.getInt(4),
        splitLanguages(rs.getString(5)), rs.getString(6));
  }

  private static String joinLanguages(List<Language> languages) {
    StringBuilder sb = new StringBuilder();
    for (Language l : languages) {
      if (sb.length() > 0) {
        sb.append(',');
      }
      sb.append(l.name());
    }
    return sb.toString();
  }

  private static List<Language> splitLanguages(String text) {
    List<Language> languages = new ArrayList<>();
    for (String part : text.split(",")) {
      if (!part.isEmpty()) {
        languages.add(Language.valueOf(part));
      }
    }
    return languages;
  }
}
