package io.dataclay.ds.objects;

import io.dataclay.ds.registration.ObjectLocator;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A stored reference needs read access to the object it names: otherwise an account that learnt
 * another dataset's object ID could store a reference to it and keep it from being collected after
 * its owner let it go. An object referenced must be one of those stored in the same request, or
 * one of a dataset the session may read; an unknown ID and an object of another dataset are refused
 * alike, as not existing.
 *
 * <p>Cost: an object's dataset never changes, so it is remembered once learnt (up to {@link
 * #MAX_REMEMBERED} objects). The common case, a reference to an object stored here, costs a header
 * read the first time; a reference to an object on another backend costs one Logic Module round
 * trip the first time it is met on this backend.
 *
 * <p>An object stored here whose ID is still claimed (its call has not heard from the Logic Module)
 * is not taken at its header's word: another account may have sent that ID, to be refused and
 * removed; the Logic Module, which knows only registered objects, is asked instead.
 */
public final class ReferenceAccess {
  /** How many objects' datasets are remembered; past it, the memory starts again empty. */
  static final int MAX_REMEMBERED = 200_000;

  private final ObjectStore store;
  private final ObjectLocator directory;
  private final IdClaims claims;
  private final Map<UUID, String> datasets = new ConcurrentHashMap<>();

  /**
   * Checks against the settled objects in {@code store} (not those {@code claims} holds), asking
   * {@code directory} about the others.
   */
  public ReferenceAccess(ObjectStore store, ObjectLocator directory, IdClaims claims) {
    this.store = store;
    this.directory = directory;
    this.claims = claims;
  }

  /**
   * Returns normally when every reference in {@code fields} names an object of {@code created} or
   * one the session may read. May call the Logic Module (see the class comment).
   *
   * @throws ObjectDoesNotExistException naming {@code where} and the first other reference
   */
  public void check(Session session, Map<String, FieldValue> fields, Collection<UUID> created, String where) {
    if (session.backend()) {
      return; // backends copy and apply what was already checked where it was written
    }
    for (Map.Entry<String, FieldValue> f : fields.entrySet()) {
      for (UUID ref : f.getValue().references()) {
        if (!created.contains(ref) && !mayRead(session, ref)) {
          throw new ObjectDoesNotExistException(where + " field '" + f.getKey() + "' references object " + ref
              + ", which does not exist: only objects the session may read can be referenced");
        }
      }
    }
  }

  /**
   * Whether references to {@code refs} can be checked without calling the Logic Module (each is
   * among {@code created}, remembered, or stored here).
   */
  public boolean decidedNow(Collection<UUID> refs, Set<UUID> created) {
    for (UUID ref : refs) {
      if (!created.contains(ref) && datasetKnownNow(ref) == null) {
        return false;
      }
    }
    return true;
  }

  private boolean mayRead(Session session, UUID id) {
    String dataset = datasetKnownNow(id);
    if (dataset == null) {
      try {
        dataset = directory.locate(id).header().dataset();
      } catch (ObjectDoesNotExistException unknown) {
        return false; // not remembered: it may be registered later
      }
      remember(id, dataset);
    }
    return session.mayAccess(dataset);
  }

  private String datasetKnownNow(UUID id) {
    String dataset = datasets.get(id);
    if (dataset == null) {
      Optional<ObjectHeader> here = claims.isClaimed(id) ? Optional.empty() : store.header(id);
      if (here.isPresent()) {
        dataset = here.get().dataset();
        remember(id, dataset);
      }
    }
    return dataset;
  }

  private void remember(UUID id, String dataset) {
    if (datasets.size() >= MAX_REMEMBERED) {
      datasets.clear(); // rare, and only costs lookups again: simpler than an eviction order
    }
    datasets.put(id, dataset);
  }
}
