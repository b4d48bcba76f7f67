package io.dataclay.api;

import java.util.Objects;
import java.util.UUID;

/**
 * How a {@link DataClayObject} instance relates to its persistent object.
 *
 * @param id the persistent object's ID
 * @param backend where its master copy was last seen (a hint: may be stale or null)
 * @param proxy true when this instance holds no state and every method call goes to the backend;
 *     false when it holds the state itself (an instance loaded inside a backend)
 */
public record ObjectState(UUID id, UUID backend, boolean proxy) {
  /** Validates the ID is present. */
  public ObjectState {
    Objects.requireNonNull(id, "id");
  }
}
