package io.dataclay.logic.metadata;

import io.dataclay.common.Language;
import java.util.List;
import java.util.Objects;

/** A registered Data Service backend and the execution-environment languages it runs. */
public record BackendRecord(String id, String name, String host, int port, List<Language> languages,
    String storeEngine) {
  /** Copies the language list; every part must be present. */
  public BackendRecord {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(storeEngine, "storeEngine");
    languages = List.copyOf(languages);
  }
}
