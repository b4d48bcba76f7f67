package io.dataclay.ds.replication;

import io.dataclay.ds.environments.Environments;
import io.dataclay.ds.models.ClassAvailability;
import io.dataclay.ds.objects.IdClaims;
import io.dataclay.ds.registration.ObjectDirectory;
import io.dataclay.ds.session.Permissions;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.BackendDoesNotExistException;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.ClassNotRegisteredException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.ObjectNotHereException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * Replicas and moves of the objects mastered here, and the other side of them: copies, changes
 * and removals that other backends (and the Logic Module's collector) send. Who holds what is
 * recorded in the Logic Module before a request returns.
 */
public final class CopyService {
  private final ObjectStore store;
  private final Environments environments;
  private final ReplicaSets replicas;
  private final PeerBackends peers;
  private final ObjectDirectory directory;
  private final IdClaims claims;
  private final ClassAvailability models;
  private final Mastership mastership;
  private final String self;

  /** The service of backend {@code self}, whose standing as a master {@code mastership} keeps. */
  public CopyService(ObjectStore store, Environments environments, ReplicaSets replicas, PeerBackends peers,
      ObjectDirectory directory, IdClaims claims, ClassAvailability models, Mastership mastership, UUID self) {
    this.mastership = mastership;
    this.store = store;
    this.environments = environments;
    this.replicas = replicas;
    this.peers = peers;
    this.directory = directory;
    this.claims = claims;
    this.models = models;
    this.self = self.toString();
  }

  /**
   * Copies objects mastered here (and, when {@code recursive}, what they reference, asking other
   * masters for theirs) to {@code target}, or to the live backend holding fewest of them when
   * {@code target} is null. The session must be allowed to change every object copied. Objects the target already holds (as master or replica) are left as they are.
   */
  public CopyResult newReplica(Session session, List<UUID> ids, String target, boolean recursive) {
    requireSome(ids);
    if (target != null) {
      requireLive(target);
    }
    ObjectGraph graph = ObjectGraph.walk(store, directory, session, ids, recursive);
    // an object still being registered would get replicas its registration does not know of
    claims.requireSettled(graph.local());
    String to = target != null ? target : pickReplicaBackend(graph.local());
    // the objects mastered here are already on this backend: only the others' masters copy theirs
    CopyResult done = to.equals(self) ? new CopyResult(List.of(), to, 0) : replicas.exclusively(() -> {
      List<ObjectCopy> copies = new ArrayList<>();
      List<UUID> copied = new ArrayList<>();
      for (UUID id : graph.local()) {
        Optional<StoredObject> o = store.get(id);
        if (o.isPresent() && !replicas.of(id).contains(to)) {
          copies.add(new ObjectCopy(asReplica(o.get()), Set.of()));
          copied.add(id);
        }
      }
      if (copies.isEmpty()) {
        return new CopyResult(List.of(), to, 0);
      }
      long bytes = peers.storeCopies(to, copies);
      // Crash note: if this process dies before the Logic Module records the replicas, the
      // target keeps copies nobody reads or updates (harmless leftovers; the next request for a
      // replica there overwrites them).
      directory.addReplicas(copied, to);
      replicas.add(copied, to);
      return new CopyResult(copied, to, bytes);
    });
    for (Map.Entry<String, List<UUID>> e : graph.remote().entrySet()) {
      if (!e.getKey().equals(to)) {
        done = done.plus(peers.newReplica(session, e.getKey(), e.getValue(), to, recursive));
      }
    }
    return done;
  }

  /**
   * Moves objects mastered here (and, when {@code recursive}, what they reference; with {@code
   * localOnly}, only what this backend masters) to {@code target}: it becomes their master, keeps
   * their replicas, and the copies here go.
   */
  public CopyResult move(Session session, List<UUID> ids, String target, boolean recursive, boolean localOnly) {
    requireSome(ids);
    if (target == null) {
      throw new InvalidArgumentException("backend_id is required: the backend to move the objects to");
    }
    requireLive(target);
    ObjectGraph graph = ObjectGraph.walk(store, directory, session, ids, recursive);
    // an object still being registered would be registered here after it moved away
    claims.requireSettled(graph.local());
    CopyResult done = new CopyResult(List.of(), target, 0);
    if (!self.equals(target)) {
      done = replicas.exclusively(() -> moveHere(graph.local(), target));
    }
    // Objects reached elsewhere move too; those already on the target are walked there, since what
    // they reference may still be on other backends (dataClay 4 moves all of it)
    for (Map.Entry<String, List<UUID>> e : graph.remote().entrySet()) {
      if (!localOnly) {
        done = done.plus(peers.move(session, e.getKey(), e.getValue(), target, recursive));
      }
    }
    return done;
  }

  private CopyResult moveHere(List<UUID> ids, String target) {
    List<ObjectCopy> copies = new ArrayList<>();
    List<UUID> moved = new ArrayList<>();
    for (UUID id : ids) {
      Optional<StoredObject> o = store.get(id);
      if (o.isPresent()) {
        Set<String> keep = new HashSet<>(replicas.of(id));
        keep.remove(target);
        copies.add(new ObjectCopy(o.get(), keep));
        moved.add(id);
      }
    }
    if (copies.isEmpty()) {
      return new CopyResult(List.of(), target, 0);
    }
    long bytes = peers.storeCopies(target, copies);
    directory.setMaster(moved, target);
    // Crash note: from here on the Logic Module sends everybody to the target. If this process
    // dies before removing its copies, they stay stored here unregistered: never read again.
    for (UUID id : moved) {
      store.remove(id);
    }
    environments.evict(moved);
    replicas.forget(moved);
    return new CopyResult(moved, target, bytes);
  }

  /**
   * Stores copies another backend sends (backends only): replicas, or master copies moving here.
   * Refused when {@code senderTerm} is older than the sender's term known here (it is fenced).
   */
  public void storeCopies(Session session, List<ObjectCopy> copies, long senderTerm) {
    requireAdmin(session, "StoreCopies");
    mastership.requireCurrent(session.backendId(), senderTerm);
    List<StoredObject> objects = new ArrayList<>(copies.size());
    List<UUID> ids = new ArrayList<>(copies.size());
    for (int i = 0; i < copies.size(); i++) {
      StoredObject o = copies.get(i).object();
      ObjectHeader h = o.header();
      if (!models.isAvailable(h.language(), h.className())) {
        throw new ClassNotRegisteredException("objects[" + i + "]: class " + h.className() + " (" + h.language()
            + ") is not in any model deployed on this backend");
      }
      if (copies.get(i).isReplica() && store.header(o.id()).filter(x -> x.masterBackendId() == null).isPresent()) {
        throw new InvalidArgumentException("objects[" + i + "]: this backend holds the master copy of " + o.id()
            + ", not a replica");
      }
      objects.add(o);
      ids.add(o.id());
    }
    store.putAll(objects);
    for (ObjectCopy c : copies) {
      if (!c.isReplica()) {
        Set<String> others = new HashSet<>(c.replicaBackendIds());
        others.remove(self);
        replicas.set(c.object().id(), others);
      }
    }
    environments.evict(ids);
  }

  /**
   * Applies a master's changes to the replicas here (backends only). Refused, with nothing
   * applied, when {@code senderTerm} is older than the sender's term known here (a master whose
   * replicas were promoted while it was cut off), or when one of them is a master copy here.
   */
  public void applyDeltas(Session session, List<ObjectDelta> deltas, long senderTerm) {
    requireAdmin(session, "ApplyDeltas");
    mastership.requireCurrent(session.backendId(), senderTerm);
    for (ObjectDelta d : deltas) {
      ObjectHeader h = store.header(d.id()).orElseThrow(
          () -> new ObjectNotHereException("object " + d.id() + " is not stored on this backend"));
      if (h.masterBackendId() == null) {
        throw new PermissionDeniedException("object " + d.id() + " has its master copy on this backend: backend "
            + session.backendId() + " passed on a change as if it were its master (a stale master, fenced)");
      }
    }
    applyHere(deltas);
  }

  /**
   * Gives objects stored here new whole states (backends only: a consolidated version's state to
   * the original's master, which passes it on to its replicas): each state's fields replace the
   * object's, and the fields it lacks are removed.
   */
  public void replaceStates(Session session, List<ObjectDelta> states, long senderTerm) {
    requireAdmin(session, "ApplyDeltas");
    mastership.requireCurrent(session.backendId(), senderTerm);
    replaceHere(states);
  }

  /**
   * Makes the replicas here of {@code promoted}'s objects their master copies (the Logic Module
   * only, after recording it): each keeps its state, stops being a replica, and its other copies
   * ({@code promoted}'s values) are brought to that state before this returns; a copy that cannot
   * be reached is dropped from its replicas. An object already mastered here only gets its
   * replicas. {@code terms}, learnt first, fence the old master.
   */
  public void promote(Session session, Map<UUID, Set<String>> promoted, Map<String, Long> terms) {
    if (!session.isLogicModule()) {
      throw new PermissionDeniedException("PromoteReplicas is for the Logic Module only");
    }
    mastership.learn(terms);
    if (promoted.isEmpty()) {
      return;
    }
    replicas.exclusively(() -> {
      List<StoredObject> masters = new ArrayList<>();
      for (UUID id : promoted.keySet()) {
        StoredObject o = store.get(id).orElseThrow(() -> new ObjectNotHereException("object " + id
            + " has no copy on this backend to promote"));
        ObjectHeader h = o.header();
        if (h.masterBackendId() != null) {
          masters.add(new StoredObject(id, new ObjectHeader(h.className(), h.language(), h.dataset(), h.versionOf(),
              null), o.fields()));
        }
      }
      // Crash note: each rewrite is atomic; a crash part-way leaves some objects promoted here and
      // the rest replicas, and the Logic Module, which keeps the promotion until it is confirmed,
      // sends it again (promoting a master copy again only sets its replicas).
      store.putAll(masters);
      Map<String, List<ObjectCopy>> byFollower = new HashMap<>();
      for (Map.Entry<UUID, Set<String>> e : promoted.entrySet()) {
        Set<String> followers = new HashSet<>(e.getValue());
        followers.remove(self);
        replicas.set(e.getKey(), followers);
        StoredObject copy = asReplica(store.get(e.getKey()).orElseThrow());
        followers.forEach(f -> byFollower.computeIfAbsent(f, k -> new ArrayList<>()).add(new ObjectCopy(copy, Set.of())));
      }
      environments.evict(List.copyOf(promoted.keySet()));
      for (Map.Entry<String, List<ObjectCopy>> e : byFollower.entrySet()) {
        try {
          peers.storeCopies(e.getKey(), e.getValue());
        } catch (DataClayException failed) {
          List<UUID> ids = e.getValue().stream().map(c -> c.object().id()).toList();
          directory.removeReplicas(ids, e.getKey());
          ids.forEach(id -> replicas.drop(id, e.getKey()));
        }
      }
      return null;
    });
  }

  /**
   * Drops the stale copies here that the Logic Module lists ({@code demotions}: object to its master
   * now): master copies whose replicas were promoted while this backend was cut off, and replicas
   * their master dropped when this backend missed a change. Each goes from the store and every
   * environment's memory; the masters then give this backend fresh replicas. Returns the objects done.
   */
  public List<String> demote(Map<UUID, String> demotions) {
    removeHere(List.copyOf(demotions.keySet()));
    return demotions.keySet().stream().map(UUID::toString).toList();
  }

  /** As {@link #replaceStates}, for this backend's own use. */
  void replaceHere(List<ObjectDelta> states) {
    List<ObjectDelta> deltas = new ArrayList<>(states.size());
    for (ObjectDelta state : states) {
      StoredObject now = store.get(state.id()).orElseThrow(
          () -> new ObjectNotHereException("object " + state.id() + " is not stored on this backend"));
      Set<String> removed = new HashSet<>(now.fields().keySet());
      removed.removeAll(state.changed().keySet());
      deltas.add(new ObjectDelta(state.id(), state.changed(), removed));
    }
    applyHere(deltas);
  }

  /** Applies deltas to the copies here, passing those of objects mastered here on to their replicas. */
  void applyHere(List<ObjectDelta> deltas) {
    List<ObjectDelta> mastered = new ArrayList<>();
    List<UUID> ids = new ArrayList<>(deltas.size());
    for (ObjectDelta d : deltas) {
      ObjectHeader h = store.header(d.id()).orElseThrow(
          () -> new ObjectNotHereException("object " + d.id() + " is not stored on this backend"));
      if (h.masterBackendId() == null) {
        mastered.add(d);
      } else {
        store.applyDelta(d);
      }
      ids.add(d.id());
    }
    if (!mastered.isEmpty()) {
      try {
        replicas.writeThrough(mastered, () -> mastered.forEach(store::applyDelta)).join();
      } catch (java.util.concurrent.CompletionException e) {
        throw e.getCause() instanceof RuntimeException r ? r : e;
      }
    }
    environments.evict(ids);
  }

  /** Removes objects from this backend (administrators); returns how many were stored. */
  public int deleteObjects(Session session, List<UUID> ids) {
    requireAdmin(session, "DeleteObjects");
    return removeHere(ids);
  }

  /** Removes objects stored here, from the store and every environment's memory. */
  int removeHere(List<UUID> ids) {
    int removed = 0;
    for (UUID id : ids) {
      if (store.remove(id)) {
        removed++;
      }
    }
    environments.evict(ids);
    replicas.forget(ids);
    return removed;
  }

  private String pickReplicaBackend(List<UUID> ids) {
    List<String> candidates = new ArrayList<>(directory.liveBackends());
    candidates.remove(self);
    if (candidates.isEmpty()) {
      throw new BackendUnavailableException("no other live backend can hold a replica: start another backend");
    }
    // the backend already holding fewest of these objects; ties broken at random to spread copies
    Collections.shuffle(candidates);
    return candidates.stream().min(Comparator.comparingLong(
        b -> ids.stream().filter(id -> replicas.of(id).contains(b)).count())).orElseThrow();
  }

  private void requireLive(String backendId) {
    if (!directory.liveBackends().contains(backendId)) {
      throw new BackendDoesNotExistException("backend_id: no live backend " + backendId + " is registered");
    }
  }

  private StoredObject asReplica(StoredObject o) {
    ObjectHeader h = o.header();
    return new StoredObject(o.id(), new ObjectHeader(h.className(), h.language(), h.dataset(), h.versionOf(), self),
        o.fields());
  }

  private static void requireSome(List<UUID> ids) {
    if (ids.isEmpty()) {
      throw new InvalidArgumentException("object_ids is empty: name at least one object");
    }
  }

  static void requireAdmin(Session session, String rpc) {
    Permissions.requireBackend(session, rpc);
  }
}
