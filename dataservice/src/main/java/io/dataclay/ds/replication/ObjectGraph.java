package io.dataclay.ds.replication;

import io.dataclay.ds.registration.ObjectDirectory;
import io.dataclay.ds.registration.ObjectLocation;
import io.dataclay.ds.session.Permissions;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.exceptions.ObjectNotHereException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * The objects a replica or move request covers, split by where their master copy is: here (this
 * backend copies them itself) or on other backends (which are asked to copy theirs).
 *
 * @param local objects mastered here, requested ones first
 * @param remote other masters' objects, by master backend ID
 */
record ObjectGraph(List<UUID> local, Map<String, List<UUID>> remote) {

  /**
   * Walks from {@code roots}, which must be mastered here; when {@code recursive}, follows every
   * reference transitively. Every object reached must be changeable by {@code session}: a replica
   * or a move places the dataset's data on a backend of the caller's choice, which is the dataset's
   * writers' decision, not its readers'. Those mastered here and the first ones met on other masters
   * are checked before anything is copied; other masters check what they reach from there
   * themselves, asked with the same session. A reference to an object nobody knows (a dangling one)
   * is skipped.
   */
  static ObjectGraph walk(ObjectStore store, ObjectDirectory directory, Session session, List<UUID> roots,
      boolean recursive) {
    for (UUID id : roots) {
      // a root the session may not read is answered as one whose master copy is elsewhere (no ID oracle)
      store.header(id).filter(x -> x.masterBackendId() == null && Permissions.mayRead(session, x)).orElseThrow(
          () -> new ObjectNotHereException("the master copy of object " + id + " is not on this backend"));
    }
    List<UUID> local = new ArrayList<>();
    Map<String, List<UUID>> remote = new LinkedHashMap<>();
    Set<UUID> seen = new HashSet<>(roots);
    Deque<UUID> todo = new ArrayDeque<>(roots);
    while (!todo.isEmpty()) {
      UUID id = todo.poll();
      Optional<StoredObject> here = store.get(id).filter(o -> o.header().masterBackendId() == null);
      if (here.isEmpty()) {
        ObjectLocation where;
        try {
          where = directory.locate(id);
        } catch (ObjectDoesNotExistException dangling) {
          continue; // a reference to a collected or never registered object: nothing to copy
        }
        // checked here too, before anything is copied: its master checks it (and what it reaches)
        // again, but a refusal found now changes nothing anywhere
        Permissions.checkWrite(session, id, where.header());
        remote.computeIfAbsent(where.masterBackendId(), k -> new ArrayList<>()).add(id);
        continue;
      }
      Permissions.checkWrite(session, id, here.get().header());
      local.add(id);
      if (recursive) {
        for (FieldValue f : here.get().fields().values()) {
          for (UUID ref : f.references()) {
            if (seen.add(ref)) {
              todo.add(ref);
            }
          }
        }
      }
    }
    return new ObjectGraph(local, remote);
  }
}
