package io.dataclay.ds.objects;

import io.dataclay.common.Language;
import io.dataclay.ds.collection.ReferenceRecorder;
import io.dataclay.ds.models.ClassAvailability;
import io.dataclay.ds.registration.GroupCommitRegistrar;
import io.dataclay.ds.session.Permissions;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.ClassNotRegisteredException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.ObjectAlreadyExistsException;
import io.dataclay.exceptions.ObjectNotHereException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/** Stores new objects (make persistent) and serves their stored form. */
public final class ObjectService {
  private final ObjectStore store;
  private final GroupCommitRegistrar registrar;
  private final ClassAvailability models;
  private final IdClaims claims;
  private final ReferenceRecorder recorder;
  private final ReferenceAccess references;

  /** The service over a store, registering objects through {@code registrar}. */
  public ObjectService(ObjectStore store, GroupCommitRegistrar registrar, ClassAvailability models, IdClaims claims,
      ReferenceRecorder recorder, ReferenceAccess references) {
    this.references = references;
    this.store = store;
    this.registrar = registrar;
    this.models = models;
    this.claims = claims;
    this.recorder = recorder;
  }

  /**
   * Stores a graph of new objects in the session's dataset and registers them with the Logic
   * Module as one group (with the alias, if not null, for objects[0]). The future completes once
   * they are durable and registered: only then may the call be acknowledged. When the Logic Module
   * refuses (OBJECT_ALREADY_EXISTS for an ID registered elsewhere, ALIAS_ALREADY_EXISTS) nothing
   * stays stored and the future fails with its error. A client's object carries its class,
   * language and fields; the rest of its header is this server's to set, so an object claiming to
   * be a version or a replica is refused, and so is a reference to an object the session may not
   * read (see {@link ReferenceAccess}). Blocks on the Logic Module only to learn the dataset of a
   * referenced object on another backend ({@link #referencesDecidedNow} says when it will not).
   */
  public CompletableFuture<Void> makePersistent(Session session, List<StoredObject> objects, String alias) {
    if (objects.isEmpty()) {
      throw new InvalidArgumentException("objects is empty: nothing to make persistent");
    }
    Permissions.checkWritable(session, session.dataset());
    List<UUID> ids = checkNew(session, objects);
    Set<UUID> batch = new HashSet<>(ids);
    for (int i = 0; i < objects.size(); i++) {
      references.check(session, objects.get(i).fields(), batch, "objects[" + i + "]");
    }
    claims.claim(ids);
    CompletableFuture<Void> registered;
    try {
      for (int i = 0; i < objects.size(); i++) {
        if (store.header(ids.get(i)).isPresent()) {
          throw new ObjectAlreadyExistsException("object " + ids.get(i) + " (objects[" + i + "]) is already stored");
        }
      }
      List<StoredObject> inDataset = new ArrayList<>(objects.size());
      for (StoredObject o : objects) {
        ObjectHeader h = o.header();
        inDataset.add(new StoredObject(o.id(),
            new ObjectHeader(h.className(), h.language(), session.dataset(), null, null),
            o.fields()));
      }
      recorder.held(session, ids);
      store.putAll(inDataset);
      // Crash note: from here until the Logic Module answers, the objects are stored but not
      // registered, and the call is not acknowledged. If the Data Service dies now, its next start
      // registers them (or removes them when their IDs are taken): never half an object, since
      // each one was stored whole and atomically.
      registered = registrar.register(inDataset, alias, ids.get(0));
    } catch (RuntimeException e) {
      claims.release(ids);
      throw e;
    }
    // Runs on the registrar's thread. Only a refusal removes anything (microseconds on the pmem and
    // DRAM engines, a database round trip on postgres); the IDs stay claimed until it is done, so
    // no concurrent call stores them meanwhile.
    return registered.whenComplete((ok, refused) -> {
      try {
        if (refused != null) {
          for (UUID id : ids) {
            store.remove(id);
          }
        }
      } finally {
        claims.release(ids);
      }
    });
  }

  /**
   * Whether storing objects of this class is allowed or refused without waiting for a model install
   * or a Logic Module call (see {@link ClassAvailability#isDecidedNow}).
   */
  public boolean classKnownNow(Language language, String className) {
    return models.isDecidedNow(language, className);
  }

  /** Whether references to {@code refs} from objects {@code created} are checked without calling the Logic Module. */
  public boolean referencesDecidedNow(Collection<UUID> refs, Set<UUID> created) {
    return references.decidedNow(refs, created);
  }

  /** Whether storing small objects never waits on I/O (see {@link ObjectStore#writesWithoutWaiting}). */
  public boolean writesWithoutWaiting() {
    return store.writesWithoutWaiting();
  }

  /**
   * The stored form of objects, in the order asked.
   *
   * @throws ObjectNotHereException naming the first ID this backend does not hold, or holds for a
   *     dataset the session may not read (the same answer: see {@link Permissions#check})
   * @throws PermissionDeniedException when the session may not use the class of one of them (see
   *     {@link ClassAvailability#requireUsable})
   * @throws ClassNotRegisteredException when the class of one of them is in no model here, or its
   *     model was withdrawn
   */
  public List<StoredObject> getObjects(Session session, List<UUID> ids) {
    List<StoredObject> out = new ArrayList<>(ids.size());
    Set<String> usable = new HashSet<>();
    for (UUID id : ids) {
      StoredObject o = store.get(id).orElseThrow(() -> Permissions.notStoredHere(id));
      Permissions.check(session, id, o.header());
      ObjectHeader h = o.header();
      if (usable.add(h.language() + " " + h.className())) {
        models.requireUsable(session, h.language(), h.className(), "object " + id);
      }
      out.add(o);
    }
    return out;
  }

  private List<UUID> checkNew(Session session, List<StoredObject> objects) {
    Map<UUID, Integer> seen = new HashMap<>();
    List<UUID> ids = new ArrayList<>(objects.size());
    for (int i = 0; i < objects.size(); i++) {
      StoredObject o = objects.get(i);
      Integer first = seen.putIfAbsent(o.id(), i);
      if (first != null) {
        throw new InvalidArgumentException(
            "objects[" + i + "].id repeats objects[" + first + "].id (" + o.id() + ")");
      }
      if (o.header().versionOf() != null || o.header().masterBackendId() != null) {
        throw new InvalidArgumentException("objects[" + i + "].header: version_of and master_backend_id are set by"
            + " the server (versions come from NewVersion, replicas from NewReplica), not by a client");
      }
      models.requireUsable(session, o.header().language(), o.header().className(), "objects[" + i + "]");
      ids.add(o.id());
    }
    return ids;
  }
}
