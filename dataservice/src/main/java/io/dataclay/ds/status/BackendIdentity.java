package io.dataclay.ds.status;

import io.dataclay.common.Language;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * Who this backend is, as registered with the Logic Module.
 *
 * @param port the port actually bound
 * @param languages the execution environments it runs
 */
public record BackendIdentity(
    UUID id, String name, String host, int port, List<Language> languages, String storeEngine) {
  /** Validates and freezes the identity. */
  public BackendIdentity {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(host, "host");
    languages = List.copyOf(Objects.requireNonNull(languages, "languages"));
    Objects.requireNonNull(storeEngine, "storeEngine");
  }
}
