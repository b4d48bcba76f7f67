package io.dataclay.logic.metadata;

import io.dataclay.common.Language;
import java.util.List;
import java.util.Objects;

/**
 * A registered model: the code files and class descriptions of one namespace, in one language.
 *
 * @param published every account may use it (else only its owner and administrators)
 * @param withdrawn its owner may no longer register models: its code runs nowhere (computed when read)
 * @param revision its last change in the cluster-wide sequence of model changes (0: not stored yet)
 */
public record ModelRecord(String namespace, Language language, String owner, long version, List<File> files,
    List<ClassInfo> classes, boolean published, boolean withdrawn, long revision) {
  /** Copies the lists; every part must be present. */
  public ModelRecord {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(language, "language");
    Objects.requireNonNull(owner, "owner");
    files = List.copyOf(files);
    classes = List.copyOf(classes);
  }

  /** A model as a client sends it for registration: not published, not withdrawn, not stored yet. */
  public ModelRecord(String namespace, Language language, String owner, long version, List<File> files,
      List<ClassInfo> classes) {
    this(namespace, language, owner, version, files, classes, false, false, 0);
  }

  /** This model as registered by {@code owner} at {@code version}. */
  public ModelRecord withOwnerAndVersion(String newOwner, long newVersion) {
    return new ModelRecord(namespace, language, newOwner, newVersion, files, classes, published, withdrawn, revision);
  }

  /** This model, published or not. */
  public ModelRecord withPublished(boolean isPublished) {
    return new ModelRecord(namespace, language, owner, version, files, classes, isPublished, withdrawn, revision);
  }

  /** This model without its files (what a backend gets of a withdrawn model). */
  public ModelRecord withoutFiles() {
    return new ModelRecord(namespace, language, owner, version, List.of(), classes, published, withdrawn, revision);
  }

  /**
   * Whether {@code username} may read this model (GetModel, ListModels): its owner, an
   * administrator, or anyone while it is published and not withdrawn: exactly those who may use it,
   * and the owner and administrators also while it is withdrawn.
   */
  public boolean readableBy(String username, boolean admin) {
    return admin || owner.equals(username) || (published && !withdrawn);
  }

  /** A file of model code, by its path relative to the class path. */
  public record File(String path, byte[] content) {
    /** Requires both parts. */
    public File {
      Objects.requireNonNull(path, "path");
      Objects.requireNonNull(content, "content");
    }
  }

  /** A class of the model: its persistent fields and active methods. */
  public record ClassInfo(String name, List<Member> fields, List<Member> methods) {
    /** Copies the lists. */
    public ClassInfo {
      Objects.requireNonNull(name, "name");
      fields = List.copyOf(fields);
      methods = List.copyOf(methods);
    }
  }

  /** A field (detail: its type as written) or a method (detail: its signature). */
  public record Member(String name, String detail) {
    /** Requires both parts. */
    public Member {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(detail, "detail");
    }
  }
}
