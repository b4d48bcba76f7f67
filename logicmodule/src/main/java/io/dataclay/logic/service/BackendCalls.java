package io.dataclay.logic.service;

import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.ModelRecord;
import java.time.Duration;
import java.util.List;

/** What the Logic Module asks of backends: installing models, and flushing queued registrations. */
public interface BackendCalls extends AutoCloseable {
  /**
   * Starts sending {@code model} to each backend, calling with {@code token}; returns at once and
   * never throws (a backend that misses it gets it from ListModels when it registers).
   */
  void deploy(List<BackendRecord> backends, ModelRecord model, String token);

  /**
   * Asks each backend to register every object it has stored (backends register objects made
   * persistent without an alias in the background); returns when all answered or after
   * {@code timeout}. Never throws: a backend that does not answer is simply not waited for.
   */
  void flushRegistrations(List<BackendRecord> backends, String token, Duration timeout);

  /** Stops sending; deployments still queued are dropped. */
  @Override
  void close();
}
