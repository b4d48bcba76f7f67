package io.dataclay.ds.service;

import io.dataclay.exceptions.ObjectAlreadyExistsException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Object IDs being stored right now. Two concurrent requests storing the same new ID would
 * otherwise both pass the "not stored yet" check, and the loser's rollback would remove the
 * winner's object; a claim makes the second one fail with OBJECT_ALREADY_EXISTS instead.
 */
public final class IdClaims {
  private final Set<UUID> claimed = ConcurrentHashMap.newKeySet();

  /** Claims every ID or none; release them with {@link #release}. */
  public void claim(Collection<UUID> ids) {
    List<UUID> mine = new ArrayList<>(ids.size());
    for (UUID id : ids) {
      if (!claimed.add(id)) {
        release(mine);
        throw new ObjectAlreadyExistsException("object " + id + " is being stored by another request");
      }
      mine.add(id);
    }
  }

  /** Releases claimed IDs. */
  public void release(Collection<UUID> ids) {
    claimed.removeAll(ids);
  }
}
