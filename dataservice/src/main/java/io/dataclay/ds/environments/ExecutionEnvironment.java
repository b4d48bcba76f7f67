package io.dataclay.ds.environments;

import io.dataclay.common.Language;
import io.dataclay.ds.models.ModelBundle;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * Runs methods and field accesses of one language's objects next to the data: in confined,
 * supervised processes, one per account (Java may also run in the Data Service's own process, by
 * choice, on a cluster whose only user is its owner). Implementations hand
 * each answer to the {@link io.dataclay.ds.execution.ResultApplier} they were built with, in the order the environment
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

  /**
   * Objects {@code writer}'s call just changed in the store: every process but the writer's that
   * holds them in memory drops them; the future completes once calls sent afterwards see it.
   */
  default CompletableFuture<Void> changed(ExecutionEnvironment writer, Collection<UUID> ids) {
    return writer == this ? CompletableFuture.completedFuture(null) : evict(ids);
  }

  /**
   * Whether the state of {@code id} that {@code this} environment's process computed a change from
   * is still the stored one: false once another writer changed the object after the process loaded
   * it (the change would then overwrite that writer's). In-process environments load afresh for
   * every call under a lock of the object, so theirs always is.
   */
  default boolean holdsCurrent(UUID id) {
    return true;
  }

  /**
   * The field of the target object whose stored value answers {@code request} exactly as this
   * environment would (its process vouched for it, for the models it runs), or null: the caller may
   * then answer from the store without running the request here. Null unless implemented.
   */
  default String storedField(ExecutionRequest request) {
    return null;
  }

  /**
   * Drops from memory the objects of {@code account}'s process that no call in flight is using
   * (FlushAll); returns how many processes were told. In-process environments hold nothing between
   * calls.
   */
  default int unloadIdle(String account) {
    return 0;
  }

  /** Liveness, process, restarts and calls. */
  EnvironmentStatus status();

  /** Stops the environment; calls in flight fail with BACKEND_UNAVAILABLE. */
  void close();
}
