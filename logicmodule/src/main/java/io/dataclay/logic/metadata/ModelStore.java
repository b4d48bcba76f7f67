package io.dataclay.logic.metadata;

import io.dataclay.common.Language;
import io.dataclay.exceptions.NamespaceConflictException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Registered models: one per namespace, its files and class descriptions, with a version per
 * registration, whether it is published, and a revision per change of any kind.
 */
public final class ModelStore {
  private static final String FIELD = "field";
  private static final String METHOD = "method";

  private final Jdbc jdbc;

  ModelStore(Jdbc jdbc) {
    this.jdbc = jdbc;
  }

  /**
   * Stores {@code model} as the namespace's new content in one transaction (its owner is the
   * registering account; the first registration makes it the namespace's owner and decides, by
   * {@code model.published()}, whether it starts published).
   *
   * @return the model as stored, with its owner, new version (previous version + 1, first is 1),
   *     publication and revision
   * @throws PermissionDeniedException when the namespace belongs to another account
   * @throws NamespaceConflictException when the namespace has another language, or a file path or
   *     class name of the model already belongs to another namespace; nothing is changed
   */
  public ModelRecord register(ModelRecord model) {
    return jdbc.transaction(c -> register(c, model));
  }

  /** {@link #register(ModelRecord)} inside the caller's transaction. */
  static ModelRecord register(SqlConnection c, ModelRecord model) throws SQLException {
    String ns = model.namespace();
    String lang = model.language().name();
    // only the first registration sets whether it is published; later ones keep what was decided
    c.update("INSERT INTO models (namespace, language, owner, version, published, revision) VALUES (?, ?, ?, 0, ?, 0)"
        + " ON CONFLICT DO NOTHING", ns, lang, model.owner(), model.published());
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
    long revision = touch(c, ns);
    return new ModelRecord(ns, model.language(), head.owner(), head.version(), model.files(), model.classes(),
        head.published(), head.withdrawn(), revision);
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

  /** Every registered model with the last model change it includes (what a backend installs). */
  public Catalog catalog() {
    return jdbc.transaction(c -> new Catalog(list(c, null), currentRevision(c)));
  }

  /** Every registered model, by namespace, and the last model change ({@link #revision()}) they include. */
  public record Catalog(List<ModelRecord> models, long revision) {
    /** Copies the list. */
    public Catalog {
      models = List.copyOf(models);
    }
  }

  /** {@link #list(Language)} inside the caller's transaction. */
  static List<ModelRecord> list(SqlConnection c, Language language) throws SQLException {
    List<Head> heads = c.query(HEAD + " WHERE (? IS NULL OR m.language = ?) ORDER BY m.namespace", ModelStore::head,
        language == null ? null : language.name(), language == null ? null : language.name());
    List<ModelRecord> models = new ArrayList<>(heads.size());
    for (Head h : heads) {
      models.add(load(c, h));
    }
    return models;
  }

  /** The models {@code owner} registered, by namespace. */
  public List<ModelRecord> ownedBy(String owner) {
    return jdbc.transaction(c -> {
      List<ModelRecord> models = new ArrayList<>();
      for (Head h : c.query(HEAD + " WHERE m.owner = ? ORDER BY m.namespace", ModelStore::head, owner)) {
        models.add(load(c, h));
      }
      return models;
    });
  }

  /**
   * Publishes a model, or takes publication back.
   *
   * @return the model as it is now, or empty when the namespace is not registered
   */
  public Optional<ModelRecord> setPublished(String namespace, boolean published) {
    return jdbc.transaction(c -> {
      if (c.update("UPDATE models SET published = ? WHERE namespace = ?", published, namespace) == 0) {
        return Optional.<ModelRecord>empty();
      }
      touch(c, namespace);
      return Optional.of(load(c, head(c, namespace).orElseThrow()));
    });
  }

  /**
   * Removes a model (its files, classes and namespace) in one transaction, unless objects of its
   * classes are registered and {@code force} is false; the namespace is free afterwards.
   *
   * @return what happened, or empty when the namespace is not registered
   */
  public Optional<Removal> remove(String namespace, boolean force) {
    return jdbc.transaction(c -> {
      Optional<Head> head = head(c, namespace);
      if (head.isEmpty()) {
        return Optional.<Removal>empty();
      }
      String lang = head.get().language();
      // objects has no index on class_name: this scans it, which is fine for a rare administrative step
      long objects = c.queryLong("SELECT COUNT(*) FROM objects WHERE language = ? AND class_name IN"
          + " (SELECT name FROM model_classes WHERE namespace = ?)", lang, namespace);
      if (objects > 0 && !force) {
        return Optional.of(new Removal(false, objects, 0));
      }
      c.update("DELETE FROM model_members WHERE language = ? AND class_name IN"
          + " (SELECT name FROM model_classes WHERE namespace = ?)", lang, namespace);
      c.update("DELETE FROM model_classes WHERE namespace = ?", namespace);
      c.update("DELETE FROM model_files WHERE namespace = ?", namespace);
      c.update("DELETE FROM models WHERE namespace = ?", namespace);
      return Optional.of(new Removal(true, objects, next(c)));
    });
  }

  /**
   * What {@link #remove} did.
   *
   * @param removed false when objects of its classes exist and removal was not forced (nothing changed)
   * @param objects the registered objects of its classes
   * @param revision the removal's place in the sequence of model changes (0 when not removed)
   */
  public record Removal(boolean removed, long objects, long revision) {}

  /** The last model change: registration, publication, withdrawal or restoration, removal. */
  public long revision() {
    return jdbc.transaction(ModelStore::currentRevision);
  }

  /**
   * Gives every model of {@code owner} a new revision, inside the caller's transaction: whether
   * they are withdrawn changed (their owner's right to register models did).
   */
  static void touchOwnedBy(SqlConnection c, String owner) throws SQLException {
    for (String ns : c.query("SELECT namespace FROM models WHERE owner = ? ORDER BY namespace", rs -> rs.getString(1),
        owner)) {
      touch(c, ns);
    }
  }

  // Each change takes the next number of the one-row counter: its row lock orders concurrent
  // changes the way they commit, so a backend told of two changes of a model keeps the later one.
  private static long touch(SqlConnection c, String namespace) throws SQLException {
    long revision = next(c);
    c.update("UPDATE models SET revision = ? WHERE namespace = ?", revision, namespace);
    return revision;
  }

  private static long next(SqlConnection c) throws SQLException {
    c.update("UPDATE model_revision SET value = value + 1 WHERE id = 1");
    return currentRevision(c);
  }

  private static long currentRevision(SqlConnection c) throws SQLException {
    return c.queryLong("SELECT value FROM model_revision WHERE id = 1");
  }

  private static void insertFiles(SqlConnection c, ModelRecord model) throws SQLException {
    List<Object[]> rows = new ArrayList<>();
    int position = 0;
    for (ModelRecord.File f : model.files()) {
      rows.add(new Object[] {model.language().name(), f.path(), model.namespace(), position++, f.content()});
    }
    insertClaimed(c, model, "file", rows, "INSERT INTO model_files (language, path, namespace, position, content)"
        + " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        "SELECT namespace FROM model_files WHERE language = ? AND path = ?");
  }

  private static void insertClasses(SqlConnection c, ModelRecord model) throws SQLException {
    String lang = model.language().name();
    List<Object[]> rows = new ArrayList<>();
    int position = 0;
    for (ModelRecord.ClassInfo k : model.classes()) {
      rows.add(new Object[] {lang, k.name(), model.namespace(), position++});
    }
    insertClaimed(c, model, "class", rows, "INSERT INTO model_classes (language, name, namespace, position)"
        + " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
        "SELECT namespace FROM model_classes WHERE language = ? AND name = ?");
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

  // withdrawn is not stored: it follows the owner's right to register models, so granting it
  // again restores every model of the account
  private static final String HEAD = "SELECT m.namespace, m.language, m.owner, m.version, m.published, m.revision,"
      + " NOT (a.admin OR a.may_register_models) FROM models m JOIN accounts a ON a.username = m.owner";

  private static Optional<Head> head(SqlConnection c, String namespace) throws SQLException {
    return c.queryOne(HEAD + " WHERE m.namespace = ?", ModelStore::head, namespace);
  }

  private static Head head(ResultSet rs) throws SQLException {
    return new Head(rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4), rs.getBoolean(5), rs.getLong(6),
        rs.getBoolean(7));
  }

  private static ModelRecord load(SqlConnection c, Head h) throws SQLException {
    List<ModelRecord.File> files = c.query("SELECT path, content FROM model_files WHERE namespace = ?"
        + " ORDER BY position", rs -> new ModelRecord.File(rs.getString(1), rs.getBytes(2)), h.namespace());
    List<String> names = c.query("SELECT name FROM model_classes WHERE namespace = ? ORDER BY position",
        rs -> rs.getString(1), h.namespace());
    List<ModelRecord.ClassInfo> classes = new ArrayList<>(names.size());
    for (String name : names) {
      classes.add(new ModelRecord.ClassInfo(name, members(c, h.language(), name, FIELD),
          members(c, h.language(), name, METHOD)));
    }
    return new ModelRecord(h.namespace(), Language.valueOf(h.language()), h.owner(), h.version(), files, classes,
        h.published(), h.withdrawn(), h.revision());
  }

  private static List<ModelRecord.Member> members(SqlConnection c, String lang, String className, String kind)
      throws SQLException {
    return c.query("SELECT name, detail FROM model_members WHERE language = ? AND class_name = ? AND kind = ?"
        + " ORDER BY position", rs -> new ModelRecord.Member(rs.getString(1), rs.getString(2)), lang, className, kind);
  }

  /**
   * Inserts {@code rows} (language, key, namespace, ...) with {@code insert}, which skips a key
   * already there; {@code owner} finds the namespace holding a (language, key).
   *
   * @throws NamespaceConflictException naming the {@code what} when another namespace holds one of the keys
   */
  private static void insertClaimed(SqlConnection c, ModelRecord model, String what, List<Object[]> rows,
      String insert, String owner) throws SQLException {
    if (allInserted(c, insert, rows)) {
      return;
    }
    for (Object[] row : rows) {
      Optional<String> holder = c.claim(insert, row, owner, row[0], row[1]);
      if (holder.isPresent() && !holder.get().equals(model.namespace())) {
        throw new NamespaceConflictException(what + " '" + row[1] + "' already belongs to namespace '"
            + holder.get() + "'");
      }
    }
  }

  /** Runs one insert per row as a batch; true when the driver reports every row inserted. */
  private static boolean allInserted(SqlConnection c, String insert, List<Object[]> rows) throws SQLException {
    for (int n : c.batch(insert, rows)) {
      if (n != 1) {
        return false;
      }
    }
    return true;
  }

  /** The models row of a namespace, and whether its owner lost the right to register models. */
  private record Head(String namespace, String language, String owner, long version, boolean published,
      long revision, boolean withdrawn) {}
}
