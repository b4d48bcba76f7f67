package io.dataclay.ds.objects;

import io.dataclay.exceptions.ObjectAlreadyExistsException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Object IDs being stored right now. Two concurrent requests storing the same new ID would
 * otherwise both pass the "not stored yet" check, and the loser's rollback would remove the
 * winner's object; a claim makes the second one fail with OBJECT_ALREADY_EXISTS instead. A claim
 * lasts until the Logic Module answered for the objects (and a refused call removed them), so
 * replicas and moves, which change their metadata, wait for that.
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

  /**
   * Throws for the first of {@code ids} still claimed: its object is being stored and registered
   * by a call not answered yet, so it exists for nobody else until then.
   *
   * @throws ObjectDoesNotExistException naming that object
   */
  public void requireSettled(Collection<UUID> ids) {
    for (UUID id : ids) {
      if (claimed.contains(id)) {
        throw new ObjectDoesNotExistException("object " + id + " is still being made persistent (the call storing it"
            + " has not returned): retry once it has");
      }
    }
  }

  /** Whether {@code id} is claimed: its object, if stored here, may yet be refused and removed. */
  public boolean isClaimed(UUID id) {
    return claimed.contains(id);
  }

  /** Releases claimed IDs. */
  public void release(Collection<UUID> ids) {
    claimed.removeAll(ids);
  }
}
