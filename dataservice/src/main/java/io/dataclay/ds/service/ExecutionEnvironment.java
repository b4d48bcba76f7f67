package io.dataclay.ds.service;

import io.dataclay.common.Language;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * Runs methods and field accesses of one language's objects next to the data (the Python
 * environment is a supervised child process; a Java one runs in-process). Implementations hand
 * each answer to the {@link ResultApplier} they were built with, in the order the environment
 * produced them, and complete the call's future only after the applier stored its changes: an
 * acknowledged call is a stored call.
 */
public interface ExecutionEnvironment {
  /** The language whose objects this environment runs. */
  Language language();

  /**
   * Runs a request. The future completes with the encoded value once the call's changes are
   * stored, or exceptionally with a {@link io.dataclay.exceptions.DataClayException} (the call's
   * own error, a storing error, or BACKEND_UNAVAILABLE when the environment is down). It never
   * blocks the calling thread.
   */
  CompletableFuture<byte[]> execute(ExecutionRequest request);

  /** Installs models whose files are already written; the environment reloads what changed. */
  void deploy(List<ModelBundle> models);

  /**
   * Stops running these models' code: processes that may have loaded it are restarted; their
   * classes are refused from now on (their files are already deleted).
   */
  void withdraw(Collection<String> namespaces);

  /**
   * Drops objects from the environment's memory, so it reloads their stored state. The future
   * completes once every call sent to the environment afterwards is sure to see the eviction:
   * whoever answers a caller because of the eviction (a refused change, a replica updated) waits
   * for it first, or that caller's next call could still read the dropped state.
   */
  CompletableFuture<Void> evict(Collection<UUID> ids);

  /** Liveness, process, restarts and calls. */
  EnvironmentStatus status();

  /** Stops the environment; calls in flight fail with BACKEND_UNAVAILABLE. */
  void close();
}
