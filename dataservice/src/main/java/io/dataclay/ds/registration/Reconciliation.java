package io.dataclay.ds.registration;

import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.ObjectAlreadyExistsException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * After an unclean stop, registers again every master copy the store holds, in the background:
 * a Data Service that died between storing and registering left objects the Logic Module never
 * heard of (their calls were never acknowledged). Registering an object again from here changes
 * nothing. Each object is a group of its own. One the Logic Module refuses as already registered
 * by another backend or as another object is left over from a refused call, or is a stale copy of
 * an object that moved or was promoted elsewhere while this backend was down: it is removed here.
 */
public final class Reconciliation {
  private static final Logger LOG = Logger.getLogger(Reconciliation.class.getName());
  private static final int CHUNK = 10_000;
  private static final long RETRY_MS = 1_000;

  private final ObjectStore store;
  private final LogicModuleGateway registrar;
  private final Consumer<Collection<UUID>> removed;
  private volatile boolean stopping;
  private volatile boolean finished;

  private Reconciliation(ObjectStore store, LogicModuleGateway registrar, Consumer<Collection<UUID>> removed) {
    this.store = store;
    this.registrar = registrar;
    this.removed = removed;
  }

  /**
   * Starts re-registering what {@code store} holds through {@code registrar}; the IDs of the
   * objects it removes go to {@code removed} (which evicts them from the execution environments).
   */
  public static Reconciliation start(ObjectStore store, LogicModuleGateway registrar,
      Consumer<Collection<UUID>> removed) {
    Reconciliation r = new Reconciliation(store, registrar, removed);
    Thread t = new Thread(r::run, "dataclay-ds-reconcile");
    t.setDaemon(true);
    t.start();
    return r;
  }

  /** Whether every stored master copy got the Logic Module's answer (and the refused ones are gone). */
  public boolean finished() {
    return finished;
  }

  /** Stops at the next chunk or retry; the next start walks the store again. */
  public void stop() {
    stopping = true;
  }

  private void run() {
    try {
      finished = reconcileAll();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "re-registering the stored objects failed; the next start tries again", e);
    }
  }

  private boolean reconcileAll() {
    List<UUID> refused = new ArrayList<>();
    List<StoredObject> chunk = new ArrayList<>();
    boolean[] complete = {true};
    // Registered while the store is walked (the walk reads headers only, and a chunk at a time is
    // in memory); removed after it, since the walk is not promised to survive removals.
    store.forEachId(id -> {
      if (!complete[0]) {
        return;
      }
      store.header(id).ifPresent(h -> {
        if (h.masterBackendId() == null) {
          chunk.add(new StoredObject(id, h, Map.of()));
          if (chunk.size() == CHUNK) {
            complete[0] = reconcile(chunk, refused);
            chunk.clear();
          }
        }
      });
    });
    if (!complete[0] || !reconcile(chunk, refused) || stopping) {
      return false;
    }
    for (UUID id : refused) {
      store.remove(id);
    }
    if (!refused.isEmpty()) {
      LOG.warning("removed " + refused.size() + " stored objects whose IDs the Logic Module has registered as other"
          + " objects or on other backends (left by refused calls, or by a move or failover that finished while"
          + " this backend was down)");
      removed.accept(refused);
    }
    return true;
  }

  // Sends each object as a group of its own until the Logic Module answered for every one; false
  // when stopped first.
  private boolean reconcile(List<StoredObject> chunk, List<UUID> refused) {
    List<StoredObject> left = chunk;
    while (!left.isEmpty()) {
      if (stopping) {
        return false;
      }
      List<Optional<DataClayException>> outcomes =
          registrar.registerGroups(left.stream().map(o -> new RegistrationGroup(List.of(o), null, null)).toList());
      List<StoredObject> again = new ArrayList<>();
      for (int i = 0; i < left.size(); i++) {
        Optional<DataClayException> outcome = outcomes.get(i);
        if (outcome.isEmpty()) {
          continue;
        }
        if (outcome.get() instanceof ObjectAlreadyExistsException) {
          refused.add(left.get(i).id());
        } else if (outcome.get() instanceof BackendUnavailableException) {
          again.add(left.get(i));
        } else {
          // neither registered nor another object's: kept, and looked at again after the next unclean stop
          LOG.warning("could not register stored object " + left.get(i).id() + ": " + outcome.get().getMessage());
        }
      }
      left = again;
      if (!left.isEmpty() && !RetryPause.pause(RETRY_MS)) {
        return false;
      }
    }
    return true;
  }
}
