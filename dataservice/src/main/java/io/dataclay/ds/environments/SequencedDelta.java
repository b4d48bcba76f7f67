package io.dataclay.ds.environments;

import io.dataclay.ds.store.ObjectDelta;
import java.util.Objects;

/**
 * A changed-fields delta and its writer's sequence number: a delta whose sequence is not greater
 * than the last one applied to the same object by the same environment incarnation is ignored.
 */
public record SequencedDelta(ObjectDelta delta, long sequence) {
  /** Validates the delta is present. */
  public SequencedDelta {
    Objects.requireNonNull(delta, "delta");
  }
}
