package io.dataclay.ds.environments;

import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.DataClayException;
import java.util.List;
import java.util.Objects;

/**
 * What an execution environment answered for one request: a value or an error, plus the state
 * changes the call made (objects it made persistent and deltas of stored objects). The changes
 * are stored even when the call failed, since the environment's in-memory objects carry them.
 *
 * @param value the encoded result; empty when {@code error} is set or the call returns nothing
 * @param error the failure (for example a {@link io.dataclay.exceptions.RemoteException}), or null
 */
public record ExecutionResult(
    byte[] value, DataClayException error, List<StoredObject> newObjects, List<SequencedDelta> deltas) {
  /** Validates and freezes the result. */
  public ExecutionResult {
    Objects.requireNonNull(value, "value");
    newObjects = List.copyOf(Objects.requireNonNull(newObjects, "newObjects"));
    deltas = List.copyOf(Objects.requireNonNull(deltas, "deltas"));
  }
}
