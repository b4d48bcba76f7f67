package io.dataclay.ds.models;

import io.dataclay.common.Language;
import io.dataclay.ds.session.Session;
import java.util.List;
import java.util.Objects;

/**
 * A registered model as the Data Service installs it: its files and the names of its classes, who
 * owns it and who may use it.
 *
 * @param version increases with each registration of the namespace; an older one never replaces a newer one
 * @param classNames Python "module.Class" or Java binary names
 * @param owner the account that registered it
 * @param published every account may use it (else only its owner and administrators)
 * @param withdrawn its owner may no longer register models: its code is loaded nowhere (it has no files)
 * @param revision its last change in the Logic Module's sequence of model changes; an older change
 *     never replaces a newer one (0: unordered, as tests build them)
 */
public record ModelBundle(String namespace, Language language, long version, List<ModelFile> files,
    List<String> classNames, String owner, boolean published, boolean withdrawn, long revision) {
  /** Validates and freezes the bundle. */
  public ModelBundle {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(language, "language");
    Objects.requireNonNull(owner, "owner");
    files = List.copyOf(Objects.requireNonNull(files, "files"));
    classNames = List.copyOf(Objects.requireNonNull(classNames, "classNames"));
  }

  /** A published model of an administrator, unordered (what tests of code loading deploy). */
  public ModelBundle(String namespace, Language language, long version, List<ModelFile> files,
      List<String> classNames) {
    this(namespace, language, version, files, classNames, "", true, false, 0);
  }

  /**
   * Whether {@code session}'s account may use this model's classes (make objects of them
   * persistent, call their methods, read and write their fields): its owner, administrators and
   * backends, and every account once it is published; nobody while it is withdrawn.
   */
  public boolean usableBy(Session session) {
    return !withdrawn && (session.admin() || session.backend() || published || owner.equals(session.username()));
  }

  /**
   * One file of model code, relative to the model's class path.
   *
   * @param path a relative path such as "WordCount/classes.py"
   */
  public record ModelFile(String path, byte[] content) {
    /** Validates the parts are present (path safety is checked where files are written). */
    public ModelFile {
      Objects.requireNonNull(path, "path");
      Objects.requireNonNull(content, "content");
    }
  }
}
