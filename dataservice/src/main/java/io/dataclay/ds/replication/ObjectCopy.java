package io.dataclay.ds.replication;

import io.dataclay.ds.store.StoredObject;
import java.util.Objects;
import java.util.Set;

/**
 * An object sent to another backend: a replica (its header names the master) or a master copy
 * that moves, with the backends holding its replicas.
 */
public record ObjectCopy(StoredObject object, Set<String> replicaBackendIds) {
  /** Freezes the replica set. */
  public ObjectCopy {
    Objects.requireNonNull(object, "object");
    replicaBackendIds = Set.copyOf(replicaBackendIds);
  }

  /** Whether this copy is a replica (else it is the master copy). */
  public boolean isReplica() {
    return object.header().masterBackendId() != null;
  }
}
