package io.dataclay.logic.metadata;

import io.dataclay.common.Language;
import java.util.List;
import java.util.Objects;

/**
 * What the Logic Module knows of an object. {@code versionOf} is empty when the object is not a
 * version; {@code aliases} is filled on reads and ignored on registration.
 */
public record ObjectRecord(String id, String className, Language language, String dataset, String masterBackendId,
    List<String> replicaBackendIds, List<String> aliases, String versionOf) {
  /** Copies the lists; every part must be present. */
  public ObjectRecord {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(className, "className");
    Objects.requireNonNull(language, "language");
    Objects.requireNonNull(dataset, "dataset");
    Objects.requireNonNull(masterBackendId, "masterBackendId");
    Objects.requireNonNull(versionOf, "versionOf");
    replicaBackendIds = List.copyOf(replicaBackendIds);
    aliases = List.copyOf(aliases);
  }
}
