package io.dataclay.logic.backends;

import io.dataclay.logic.metadata.BackendRecord;
import java.util.Objects;

/** A registered backend and whether it heartbeated within the liveness window. */
public record RegisteredBackend(BackendRecord backend, boolean alive) {
  /** Requires the backend. */
  public RegisteredBackend {
    Objects.requireNonNull(backend, "backend");
  }
}
