package io.dataclay.client;

import java.util.List;
import java.util.UUID;

/**
 * What a NewReplica or Move call did: the objects copied (or moved), the backend they went to, and
 * the serialised bytes sent for them.
 */
public record Copies(List<UUID> objectIds, UUID backendId, long bytesSent) {
  /** Freezes the list. */
  public Copies {
    objectIds = List.copyOf(objectIds);
  }
}
