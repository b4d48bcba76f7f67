package io.dataclay.ds.replication;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * What a replica or move request did: the objects copied (or moved), where, and the serialised
 * bytes sent to other backends for it.
 */
public record CopyResult(List<UUID> ids, String backendId, long bytesSent) {
  /** Freezes the list. */
  public CopyResult {
    ids = List.copyOf(ids);
  }

  /** This result with another one's objects and bytes added. */
  public CopyResult plus(CopyResult other) {
    List<UUID> all = new ArrayList<>(ids);
    all.addAll(other.ids);
    return new CopyResult(all, backendId, bytesSent + other.bytesSent);
  }
}
