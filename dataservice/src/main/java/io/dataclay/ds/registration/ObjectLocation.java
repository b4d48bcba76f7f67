package io.dataclay.ds.registration;

import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * Where the Logic Module says an object lives, and what it is.
 *
 * @param versionOf the versioned object's ID when this object is a version, else null
 * @param header its class, language and dataset as registered (versionOf and master left null)
 */
public record ObjectLocation(UUID id, String masterBackendId, List<String> replicaBackendIds, String versionOf,
    io.dataclay.ds.store.ObjectHeader header) {
  /** Freezes the replica list. */
  public ObjectLocation {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(masterBackendId, "masterBackendId");
    replicaBackendIds = List.copyOf(replicaBackendIds);
  }
}
