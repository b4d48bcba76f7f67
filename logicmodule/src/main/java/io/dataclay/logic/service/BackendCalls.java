package io.dataclay.logic.service;

import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.ModelRecord;
import java.util.List;

/** Sends registered models to backends. */
public interface ModelDeployer extends AutoCloseable {
  /**
   * Starts sending {@code model} to each backend, calling with {@code token}; returns at once and
   * never throws (a backend that misses it gets it from ListModels when it registers).
   */
  void deploy(List<BackendRecord> backends, ModelRecord model, String token);

  /** Stops sending; deployments still queued are dropped. */
  @Override
  void close();
}
