package io.dataclay.ds.ee.java;

import io.dataclay.ds.store.StoredObject;
import java.util.Optional;
import java.util.UUID;

/**
 * Where one Java call runs: how it reads objects stored on this backend and reaches the others.
 * In the Data Service's own process the store is read directly; in a confined Java environment
 * process, state comes over its link, read by the Data Service in the caller's session.
 */
interface CallHost {
  /** This backend's ID. */
  UUID backendId();

  /** The stored state of {@code id} if this backend stores it. */
  Optional<StoredObject> stored(UUID id);

  /** Whether this backend stores {@code id}. */
  boolean storedHere(UUID id);

  /** Objects on other backends, reached as the caller. */
  RemoteObjects remote();
}
