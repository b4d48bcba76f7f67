package io.dataclay.ds.service;

import io.dataclay.common.Language;
import java.util.List;
import java.util.Objects;

/**
 * A registered model as the Data Service installs it: its files and the names of its classes.
 *
 * @param version increases with each registration of the namespace; an older one never replaces a newer one
 * @param classNames Python "module.Class" or Java binary names
 */
public record ModelBundle(
    String namespace, Language language, long version, List<ModelFile> files, List<String> classNames) {
  /** Validates and freezes the bundle. */
  public ModelBundle {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(language, "language");
    files = List.copyOf(Objects.requireNonNull(files, "files"));
    classNames = List.copyOf(Objects.requireNonNull(classNames, "classNames"));
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
