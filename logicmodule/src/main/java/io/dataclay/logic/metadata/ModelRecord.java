package io.dataclay.logic.metadata;

import io.dataclay.common.Language;
import java.util.List;
import java.util.Objects;

/** A registered model: the code files and class descriptions of one namespace, in one language. */
public record ModelRecord(String namespace, Language language, String owner, long version, List<File> files,
    List<ClassInfo> classes) {
  /** Copies the lists; every part must be present. */
  public ModelRecord {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(language, "language");
    Objects.requireNonNull(owner, "owner");
    files = List.copyOf(files);
    classes = List.copyOf(classes);
  }

  /** This model as registered by {@code owner} at {@code version}. */
  public ModelRecord withOwnerAndVersion(String newOwner, long newVersion) {
    return new ModelRecord(namespace, language, newOwner, newVersion, files, classes);
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
