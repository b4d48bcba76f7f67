package io.dataclay.api;

import io.dataclay.common.Language;
import java.util.List;
import java.util.UUID;

/**
 * An object as listed by {@link DataClay#listObjects(Class)}: what it is, where its copies are and its
 * aliases (in its dataset).
 *
 * @param backendId the backend holding its master copy
 * @param versionOf the object it is a version of; null when it is none
 */
public record StoredObject(UUID id, String className, Language language, String dataset, UUID backendId,
    List<UUID> replicaBackendIds, List<String> aliases, UUID versionOf) {
  /** Freezes the lists. */
  public StoredObject {
    replicaBackendIds = List.copyOf(replicaBackendIds);
    aliases = List.copyOf(aliases);
  }
}
