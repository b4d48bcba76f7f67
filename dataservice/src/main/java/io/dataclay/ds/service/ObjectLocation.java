package io.dataclay.ds.service;

import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * Where the Logic Module says an object lives.
 *
 * @param versionOf the versioned object's ID when this object is a version, else null
 */
public record ObjectLocation(UUID id, String masterBackendId, List<String> replicaBackendIds, String versionOf) {
  /** Freezes the replica list. */
  public ObjectLocation {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(masterBackendId, "masterBackendId");
    replicaBackendIds = List.copyOf(replicaBackendIds);
  }
}
