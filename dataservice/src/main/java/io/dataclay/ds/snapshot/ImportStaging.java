package io.dataclay.ds.snapshot;

import io.dataclay.ds.replication.ObjectCopy;
import io.dataclay.ds.session.Permissions;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.ObjectAlreadyExistsException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.logging.Logger;
import java.util.regex.Pattern;

/**
 * This backend's side of imports (docs/internals.md "Snapshots"): objects an import stores here
 * are <em>staged</em>: in the store, listed in a {@link StagingFile}, unknown to the Logic Module.
 * They become ordinary objects when the Logic Module commits the import (it registers them all in
 * one transaction) and are removed otherwise: on AbortImport, when the Logic Module no longer knows
 * the import (asked periodically, and at start), or at start when the Logic Module had not begun
 * committing.
 *
 * <p>Crash note: once PrepareImport has been answered (the list says PREPARED), this backend never
 * drops the objects on its own: the Logic Module may be committing them. It asks until the answer
 * is "committed" (keep) or "unknown" (the import is over without a commit: remove).
 */
public final class ImportStaging {
  /** What the Logic Module says of an import. */
  public enum State { UNKNOWN, OPEN, COMMITTED }

  /** Asks the Logic Module about an import. */
  public interface ImportStates {
    /** The import's state; throws a DataClayException when the Logic Module cannot be asked. */
    State stateOf(String importId);
  }

  /** Staged objects of one import, counted. */
  public record Counts(long objects, long replicas, long bytes) {}

  /** The replica sets of the master copies here (the backend's ReplicaSets). */
  public interface Replicas {
    /** From now on, changes to {@code id} are passed on to {@code backends}. */
    void set(UUID id, Set<String> backends);

    /** Forgets the replica sets of {@code ids}. */
    void forget(Collection<UUID> ids);
  }

  /** Objects per PrepareImport batch. */
  public static final int BATCH = 1000;
  /** A staged import untouched this long is checked with the Logic Module by {@link #sweep}. */
  static final long IDLE_MS = 60_000;
  private static final Pattern IMPORT_ID = Pattern.compile("[0-9a-f]{32}");
  private static final Logger LOG = Logger.getLogger(ImportStaging.class.getName());

  private final ObjectStore store;
  private final Path dir;
  private final String self;
  private final ImportStates lm;
  private final Consumer<List<UUID>> evict;
  private final Replicas replicas;
  private final Map<String, Staged> imports = new ConcurrentHashMap<>();

  /**
   * Staging into {@code store} (which must be the store every write passes), listing in {@code dir};
   * {@code self} is this backend's ID. Removed objects are {@code evict}ed from the execution
   * environments; staged master copies join {@code replicas} when the Logic Module begins committing.
   */
  public ImportStaging(ObjectStore store, Path dir, UUID self, ImportStates lm, Consumer<List<UUID>> evict,
      Replicas replicas) {
    this.store = store;
    this.dir = dir;
    this.self = self.toString();
    this.lm = lm;
    this.evict = evict;
    this.replicas = replicas;
  }

  /**
   * Starts or continues staging for import {@code importId} (administrators): the Logic Module
   * must have it open.
   */
  public void open(Session caller, String importId) {
    requireAdministrator(caller, "ImportObjects");
    checkId(importId);
    Staged s = imports.get(importId);
    if (s == null) {
      if (lm.stateOf(importId) != State.OPEN) {
        throw new InvalidArgumentException("import_id: the Logic Module has no open import " + importId);
      }
      s = imports.computeIfAbsent(importId, id -> new Staged(StagingFile.create(dir, id)));
    }
    if (s.prepared) {
      throw new InvalidArgumentException("import_id: import " + importId + " is being committed: it takes no more objects");
    }
    s.touch();
  }

  /**
   * Stores a batch of import {@code importId}'s objects, staged; each is new here, a master copy or
   * a replica of a master on another backend. Durable when it returns.
   *
   * @throws io.dataclay.exceptions.StoreFullException when the pool has no room (nothing of the batch is stored)
   */
  public void stage(String importId, List<ObjectCopy> batch, String field) {
    Staged s = imports.get(importId);
    if (s == null || s.prepared) {
      throw new InvalidArgumentException("import_id: import " + importId + " is not staging here");
    }
    synchronized (s) {
      stageInto(s, batch, field);
    }
  }

  private void stageInto(Staged s, List<ObjectCopy> batch, String field) {
    if (s.prepared) {
      throw new InvalidArgumentException("import_id: the import is being committed: it takes no more objects");
    }
    List<UUID> ids = new ArrayList<>(batch.size());
    List<StoredObject> objects = new ArrayList<>(batch.size());
    Set<UUID> seen = new HashSet<>();
    for (int i = 0; i < batch.size(); i++) {
      StoredObject o = batch.get(i).object();
      String at = field + "[" + i + "]";
      String master = o.header().masterBackendId();
      if (master != null && master.equals(self)) {
        throw new InvalidArgumentException(at + ".object.header.master_backend_id names this backend: a replica's"
            + " master is another backend (leave it empty for a master copy)");
      }
      if (batch.get(i).isReplica() && !batch.get(i).replicaBackendIds().isEmpty()) {
        throw new InvalidArgumentException(at + ".replica_backend_ids: a replica has no replicas of its own");
      }
      if (batch.get(i).replicaBackendIds().contains(self)) {
        throw new InvalidArgumentException(at + ".replica_backend_ids names this backend, which holds the master copy");
      }
      objects.add(o);
      if (!seen.add(o.id()) || s.ids.contains(o.id()) || store.header(o.id()).isPresent()) {
        throw new ObjectAlreadyExistsException(at + ": object " + o.id() + " is already stored on this backend");
      }
      ids.add(o.id());
    }
    // Crash note: the IDs are listed (and synced) before the objects are stored, so a crash between
    // the two leaves listed objects that were never stored (removing them is a no-op), never the reverse.
    s.file.append(ids);
    s.ids.addAll(ids);
    try {
      store.putAll(objects);
    } catch (RuntimeException e) {
      ids.forEach(s.ids::remove);
      throw e;
    }
    for (ObjectCopy c : batch) {
      s.count(c.object());
      if (!c.replicaBackendIds().isEmpty()) {
        s.replicaSets.put(c.object().id(), c.replicaBackendIds());
      }
    }
    s.touch();
  }

  /** What import {@code importId} staged here so far. */
  public Counts counts(String importId) {
    Staged s = imports.get(importId);
    return s == null ? new Counts(0, 0, 0) : new Counts(s.masters, s.replicas, s.bytes);
  }

  /**
   * The Logic Module begins committing {@code importId} (backends only): marks it prepared, durably;
   * from now on changes to the staged master copies reach their replicas (so none is missed between
   * the commit and FinishImport). Answers the staged objects' headers, with each master copy's
   * replicas, in batches (objects carry no fields).
   */
  public List<List<ObjectCopy>> prepare(Session caller, String importId) {
    Permissions.requireBackend(caller, "PrepareImport");
    checkId(importId);
    Staged s = imports.get(importId);
    if (s == null) {
      throw new InvalidArgumentException("import_id: nothing is staged on this backend for import " + importId);
    }
    synchronized (s) {
      s.file.markPrepared();
      s.prepared = true;
    }
    s.touch();
    s.replicaSets.forEach(replicas::set);
    List<List<ObjectCopy>> batches = new ArrayList<>();
    List<ObjectCopy> batch = new ArrayList<>(BATCH);
    for (UUID id : s.ids) {
      ObjectHeader h = store.header(id).orElseThrow(() -> new InvalidArgumentException(
          "import_id: staged object " + id + " of import " + importId + " is no longer stored here"));
      batch.add(new ObjectCopy(new StoredObject(id, h, Map.of()), s.replicaSets.getOrDefault(id, Set.of())));
      if (batch.size() == BATCH) {
        batches.add(batch);
        batch = new ArrayList<>(BATCH);
      }
    }
    if (!batch.isEmpty()) {
      batches.add(batch);
    }
    return batches;
  }

  /** How import {@code importId} ended (backends only): kept when committed, else removed. Repeating it does nothing. */
  public void finish(Session caller, String importId, boolean committed) {
    Permissions.requireBackend(caller, "FinishImport");
    checkId(importId);
    Staged s = imports.remove(importId);
    if (s != null) {
      end(importId, s.file, s.ids, committed);
    }
  }

  /** Every object staged by an unfinished import (left out of snapshots). */
  public Set<UUID> stagedIds() {
    Set<UUID> all = new HashSet<>();
    imports.values().forEach(s -> all.addAll(s.ids));
    return all;
  }

  /**
   * At start, before this backend registers what it stores: settles the imports a previous run left
   * staged (see {@link StagingRecovery}).
   */
  public void recover() throws InterruptedException {
    new StagingRecovery(dir, lm, this::removeAll).run();
  }

  /** Settles staged imports left idle (their client or the Logic Module gone): run periodically. */
  public void sweep() {
    long now = System.currentTimeMillis();
    for (Map.Entry<String, Staged> e : imports.entrySet()) {
      Staged s = e.getValue();
      if (now - s.lastActivityMs < IDLE_MS) {
        continue;
      }
      State state;
      try {
        state = lm.stateOf(e.getKey());
      } catch (DataClayException unreachable) {
        continue; // asked again next time
      }
      if (state != State.OPEN && imports.remove(e.getKey(), s)) {
        LOG.info("import " + e.getKey() + " is " + (state == State.COMMITTED ? "committed" : "over without a commit")
            + ": settling its " + s.ids.size() + " staged objects here");
        end(e.getKey(), s.file, s.ids, state == State.COMMITTED);
      } else {
        s.touch();
      }
    }
  }

  private void end(String importId, StagingFile file, Set<UUID> ids, boolean committed) {
    if (!committed) {
      removeAll(ids);
      replicas.forget(ids);
    }
    file.delete();
  }

  private void removeAll(Set<UUID> ids) {
    List<UUID> removed = new ArrayList<>(ids);
    removed.forEach(store::remove);
    evict.accept(removed);
  }

  static void requireAdministrator(Session caller, String rpc) {
    if (!caller.admin() || caller.backend()) {
      throw new PermissionDeniedException(rpc + " is for administrators; " + caller.username() + " is not one");
    }
  }

  private static void checkId(String importId) {
    if (!IMPORT_ID.matcher(importId).matches()) {
      throw new InvalidArgumentException("import_id must be 32 lower-case hex digits");
    }
  }

  /** One import's staging here. */
  private static final class Staged {
    final StagingFile file;
    final Set<UUID> ids = ConcurrentHashMap.newKeySet();
    final Map<UUID, Set<String>> replicaSets = new ConcurrentHashMap<>();
    volatile boolean prepared;
    volatile long lastActivityMs = System.currentTimeMillis();
    long masters;
    long replicas;
    long bytes;

    Staged(StagingFile file) {
      this.file = file;
    }

    void touch() {
      lastActivityMs = System.currentTimeMillis();
    }

    synchronized void count(StoredObject o) {
      if (o.header().masterBackendId() == null) {
        masters++;
      } else {
        replicas++;
      }
      bytes += o.valueBytes();
    }
  }
}
