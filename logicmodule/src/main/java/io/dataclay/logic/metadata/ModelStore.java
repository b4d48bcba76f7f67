package io.dataclay.logic.metadata;

import io.dataclay.common.Language;
import io.dataclay.exceptions.NamespaceConflictException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Registered models: one per namespace, its files and class descriptions, with a version per registration. */
public final class ModelStore {
  private static final String FIELD = "field";
  private static final String METHOD = "method";

  private final Jdbc jdbc;

  ModelStore(Jdbc jdbc) {
    this.jdbc = jdbc;
  }

  /**
   * Stores {@code model} as the namespace's new content in one transaction (its owner is the
   * registering account; the first registration makes it the namespace's owner).
   *
   * @return the model as stored, with its owner and new version (previous version + 1, first is 1)
   * @throws PermissionDeniedException when the namespace belongs to another account
   * @throws NamespaceConflictException when the namespace has another language, or a file path or
   *     class name of the model already belongs to another namespace; nothing is changed
   */
  public ModelRecord register(ModelRecord model) {
    return jdbc.transaction(c -> register(c, model));
  }

  /** {@link #register(ModelRecord)} inside the caller's transaction. */
  static ModelRecord register(PooledConnection c, ModelRecord model) throws SQLException {
    String ns = model.namespace();
    String lang = model.language().name();
    c.update("INSERT INTO models (namespace, language, owner, version) VALUES (?, ?, ?, 0)"
        + " ON CONFLICT DO NOTHING", ns, lang, model.owner());
    // the UPDATE takes the row lock first, so concurrent registrations of one namespace serialise
    c.update("UPDATE models SET version = version + 1 WHERE namespace = ?", ns);
    Head head = head(c, ns).orElseThrow();
    if (!head.owner().equals(model.owner())) {
      throw new PermissionDeniedException("namespace '" + ns + "' belongs to '" + head.owner() + "'");
    }
    if (!head.language().equals(lang)) {
      throw new NamespaceConflictException("namespace '" + ns + "' holds " + head.language()
          + " models, not " + lang);
    }
    c.update("DELETE FROM model_members WHERE language = ? AND class_name IN"
        + " (SELECT name FROM model_classes WHERE namespace = ?)", lang, ns);
    c.update("DELETE FROM model_classes WHERE namespace = ?", ns);
    c.update("DELETE FROM model_files WHERE namespace = ?", ns);
    insertFiles(c, model);
    insertClasses(c, model);
    return model.withOwnerAndVersion(model.owner(), head.version());
  }

  /** The model of a namespace, if registered. */
  public Optional<ModelRecord> find(String namespace) {
    return jdbc.transaction(c -> {
      Optional<Head> head = head(c, namespace);
      return head.isEmpty() ? Optional.<ModelRecord>empty() : Optional.of(load(c, head.get()));
    });
  }

  /** Every registered model of a language (null: all), by namespace. */
  public List<ModelRecord> list(Language language) {
    return jdbc.transaction(c -> list(c, language));
  }

  /** {@link #list(Language)} inside the caller's transaction. */
  static List<ModelRecord> list(PooledConnection c, Language language) throws SQLException {
    List<Head> heads = c.query("SELECT namespace, language, owner, version FROM models"
            + " WHERE (? IS NULL OR language = ?) ORDER BY namespace", ModelStore::head,
        language == null ? null : language.name(), language == null ? null : language.name());
    List<ModelRecord> models = new ArrayList<>(heads.size());
    for (Head h : heads) {
      models.add(load(c, h));
    }
    return models;
  }

  private static void insertFiles(PooledConnection c, ModelRecord model) throws SQLException {
    String lang = model.language().name();
    String insert = "INSERT INTO model_files (language, path, namespace, position, content) VALUES (?, ?, ?, ?, ?)"
        + " ON CONFLICT DO NOTHING";
    List<Object[]> rows = new ArrayList<>();
    int position = 0;
    for (ModelRecord.File f : model.files()) {
      rows.add(new Object[] {lang, f.path(), model.namespace(), position++, f.content()});
    }
    if (!allInserted(c, insert, rows)) {
      for (Object[] row : rows) {
        Optional<String> owner = c.claim(insert, row,
            "SELECT namespace FROM model_files WHERE language = ? AND path = ?", lang, row[1]);
        if (owner.isPresent() && !owner.get().equals(model.namespace())) {
          throw new NamespaceConflictException("file '" + row[1] + "' already belongs to namespace '"
              + owner.get() + "'");
        }
      }
    }
  }

  private static void insertClasses(PooledConnection c, ModelRecord model) throws SQLException {
    String lang = model.language().name();
    String insert = "INSERT INTO model_classes (language, name, namespace, position) VALUES (?, ?, ?, ?)"
        + " ON CONFLICT DO NOTHING";
    List<Object[]> rows = new ArrayList<>();
    int position = 0;
    for (ModelRecord.ClassInfo k : model.classes()) {
      rows.add(new Object[] {lang, k.name(), model.namespace(), position++});
    }
    if (!allInserted(c, insert, rows)) {
      for (Object[] row : rows) {
        Optional<String> owner = c.claim(insert, row,
            "SELECT namespace FROM model_classes WHERE language = ? AND name = ?", lang, row[1]);
        if (owner.isPresent() && !owner.get().equals(model.namespace())) {
          throw new NamespaceConflictException("class '" + row[1] + "' already belongs to namespace '"
              + owner.get() + "'");
        }
      }
    }
    List<Object[]> members = new ArrayList<>();
    for (ModelRecord.ClassInfo k : model.classes()) {
      addMembers(members, lang, k.name(), FIELD, k.fields());
      addMembers(members, lang, k.name(), METHOD, k.methods());
    }
    c.batch("INSERT INTO model_members (language, class_name, kind, position, name, detail)"
        + " VALUES (?, ?, ?, ?, ?, ?)", members);
  }

  private static void addMembers(List<Object[]> rows, String lang, String className, String kind,
      List<ModelRecord.Member> list) {
    int position = 0;
    for (ModelRecord.Member m : list) {
      rows.add(new Object[] {lang, className, kind, position++, m.name(), m.detail()});
    }
  }

  private static Optional<Head> head(PooledConnection c, String namespace) throws SQLException {
    return c.queryOne("SELECT namespace, language, owner, version FROM models WHERE namespace = ?",
        ModelStore::head, namespace);
  }

  private static Head head(ResultSet rs) throws SQLException {
    return new Head(rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4));
  }

  private static ModelRecord load(PooledConnection c, Head h) throws SQLException {
    List<ModelRecord.File> files = c.query("SELECT path, content FROM model_files WHERE namespace = ?"
        + " ORDER BY position", rs -> new ModelRecord.File(rs.getString(1), rs.getBytes(2)), h.namespace());
    List<String> names = c.query("SELECT name FROM model_classes WHERE namespace = ? ORDER BY position",
        rs -> rs.getString(1), h.namespace());
    List<ModelRecord.ClassInfo> classes = new ArrayList<>(names.size());
    for (String name : names) {
      classes.add(new ModelRecord.ClassInfo(name, members(c, h.language(), name, FIELD),
          members(c, h.language(), name, METHOD)));
    }
    return new ModelRecord(h.namespace(), Language.valueOf(h.language()), h.owner(), h.version(), files, classes);
  }

  private static List<ModelRecord.Member> members(PooledConnection c, String lang, String className, String kind)
      throws SQLException {
    return c.query("SELECT name, detail FROM model_members WHERE language = ? AND class_name = ? AND kind = ?"
        + " ORDER BY position", rs -> new ModelRecord.Member(rs.getString(1), rs.getString(2)), lang, className, kind);
  }

  /** Runs one insert per row as a batch; true when the driver reports every row inserted. */
  private static boolean allInserted(PooledConnection c, String insert, List<Object[]> rows) throws SQLException {
    for (int n : c.batch(insert, rows)) {
      if (n != 1) {
        return false;
      }
    }
    return true;
  }

  /** The models row of a namespace. */
  private record Head(String namespace, String language, String owner, long version) {}
}
