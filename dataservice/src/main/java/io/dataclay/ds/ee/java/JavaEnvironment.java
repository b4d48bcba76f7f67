package io.dataclay.ds.ee.java;

import io.dataclay.client.LogicModuleClient;
import io.dataclay.common.Language;
import io.dataclay.ds.environments.DeltaSequences;
import io.dataclay.ds.environments.EnvironmentStatus;
import io.dataclay.ds.environments.ExecutionEnvironment;
import io.dataclay.ds.environments.ExecutionRequest;
import io.dataclay.ds.execution.ResultApplier;
import io.dataclay.ds.models.ModelBundle;
import io.dataclay.ds.peers.BackendClients;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.rpc.TlsSettings;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The Java execution environment in the Data Service's own process ({@code
 * DATACLAY_JAVA_EE=in-process}, for a cluster whose only user is its owner: model code runs with
 * the whole Data Service's rights). Each call loads its objects from the store under the object's
 * lock and hands its changes to the {@link ResultApplier} before the next call on that object
 * runs; nothing is kept between calls, so eviction has nothing to do.
 */
public final class JavaEnvironment implements ExecutionEnvironment, CallHost {
  private final ObjectStore store;
  private final ResultApplier applier;
  private final Executor executor;
  private final UUID backendId;
  private final JavaCalls calls;
  private final RemoteObjects remote;
  private final DeltaSequences sequences = new DeltaSequences();
  private final AtomicLong count = new AtomicLong();
  private volatile boolean closed;

  /**
   * An environment on {@code store} of backend {@code backendId}; calls run on {@code executor},
   * other backends are located through {@code lm} (this backend's Logic Module client) and reached
   * in the caller's session over channels that trust {@code tls}'s CA.
   */
  public JavaEnvironment(ObjectStore store, ResultApplier applier, Executor executor, UUID backendId,
      JavaEnvironmentConfig config, Supplier<LogicModuleClient> lm, TlsSettings tls,
      Supplier<List<ModelBundle>> registered) {
    this(store, applier, executor, backendId, config, callerRemotes(lm, tls), registered);
  }

  JavaEnvironment(ObjectStore store, ResultApplier applier, Executor executor, UUID backendId,
      JavaEnvironmentConfig config, RemoteObjects remote, Supplier<List<ModelBundle>> registered) {
    this.store = store;
    this.applier = applier;
    this.executor = executor;
    this.backendId = backendId;
    this.remote = remote;
    this.calls = new JavaCalls(config, registered);
  }

  // Calls on other backends carry the caller's token, over channels that present no server certificate.
  private static RemoteObjects callerRemotes(Supplier<LogicModuleClient> lm, TlsSettings tls) {
    TlsSettings asClient = tls.enabled() ? TlsSettings.of(tls.ca(), null, null) : tls;
    BackendClients clients = new BackendClients(() -> lm.get().getBackends(), asClient,
        RemoteBackends.CALLER_TOKEN::get);
    return new RemoteBackends(id -> lm.get().getObjectInfo(id).backendId().toString(), new BackendCalls() {
      @Override
      public <T> T call(String backendId, java.util.function.Function<io.dataclay.client.DataServiceClient, T> rpc) {
        return clients.call(backendId, rpc);
      }

      @Override
      public void close() {
        clients.close();
      }
    });
  }

  @Override
  public Language language() {
    return Language.JAVA;
  }

  @Override
  public CompletableFuture<byte[]> execute(ExecutionRequest request) {
    if (closed) {
      return CompletableFuture.failedFuture(new BackendUnavailableException("the Java execution environment is stopped"));
    }
    count.incrementAndGet();
    try {
      return CompletableFuture.supplyAsync(
          () -> calls.run(this, request, result -> applier.apply(this, request, result, sequences)), executor)
          .thenCompose(f -> f);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(new BackendUnavailableException("the Data Service is stopping"));
    }
  }

  @Override
  public void deploy(List<ModelBundle> bundles) {
    calls.deploy(bundles);
  }

  @Override
  public void withdraw(Collection<String> namespaces) {
    calls.withdraw(namespaces);
  }

  @Override
  public CompletableFuture<Void> evict(Collection<UUID> ids) {
    return CompletableFuture.completedFuture(null); // nothing to drop: every call loads the stored state afresh
  }

  @Override
  public EnvironmentStatus status() {
    return new EnvironmentStatus(Language.JAVA, !closed, ProcessHandle.current().pid(), 0, count.get(), "in-process",
        List.of(), "");
  }

  @Override
  public void close() {
    closed = true;
    remote.close();
  }

  @Override
  public UUID backendId() {
    return backendId;
  }

  @Override
  public Optional<StoredObject> stored(UUID id) {
    return store.get(id);
  }

  @Override
  public boolean storedHere(UUID id) {
    return store.header(id).isPresent();
  }

  @Override
  public RemoteObjects remote() {
    return remote;
  }
}
