package io.dataclay.ds.ee.java;

import io.dataclay.api.DataClayObject;
import io.dataclay.api.Runtimes;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.common.Language;
import io.dataclay.ds.service.DeltaSequences;
import io.dataclay.ds.service.EnvironmentStatus;
import io.dataclay.ds.service.ExecutionEnvironment;
import io.dataclay.ds.service.ExecutionRequest;
import io.dataclay.ds.service.ExecutionResult;
import io.dataclay.ds.service.ModelBundle;
import io.dataclay.ds.service.ResultApplier;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.RemoteException;
import io.dataclay.rpc.TlsSettings;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * The Java execution environment, in the Data Service's process: runs methods and field accesses
 * of Java objects on instances loaded from the store for the call, then hands the call's changes
 * (changed fields, objects it made persistent) to the {@link ResultApplier}, which stores them
 * before the caller is answered. Calls on one object run one at a time; it keeps no objects
 * between calls, so the store is always the truth and eviction has nothing to do.
 */
public final class JavaEnvironment implements ExecutionEnvironment {
  private static final Logger LOG = Logger.getLogger(JavaEnvironment.class.getName());
  private static final byte[] NOTHING = new byte[0];
  private static final int LOCK_STRIPES = 256;

  private final ObjectStore store;
  private final ResultApplier applier;
  private final Executor executor;
  private final UUID backendId;
  private final JavaEnvironmentConfig config;
  private final RemoteObjects remote;
  private final ReentrantLock[] locks = new ReentrantLock[LOCK_STRIPES];
  private final DeltaSequences sequences = new DeltaSequences();
  private final AtomicLong sequence = new AtomicLong();
  private final AtomicLong calls = new AtomicLong();
  private final Supplier<List<ModelBundle>> registered;
  private final Map<String, Long> versions = new HashMap<>();
  private volatile DeployedModels models;
  private volatile boolean closed;

  /**
   * An environment on {@code store} of backend {@code backendId}; calls run on {@code executor},
   * other backends are located through {@code lm} (an administrator's Logic Module client) and
   * reached over channels secured as {@code tls} says.
   */
  public JavaEnvironment(ObjectStore store, ResultApplier applier, Executor executor, UUID backendId,
      JavaEnvironmentConfig config, Supplier<LogicModuleClient> lm, TlsSettings tls,
      Supplier<List<ModelBundle>> registered) {
    this(store, applier, executor, backendId, config, new RemoteBackends(lm, tls), registered);
  }

  JavaEnvironment(ObjectStore store, ResultApplier applier, Executor executor, UUID backendId,
      JavaEnvironmentConfig config, RemoteObjects remote, Supplier<List<ModelBundle>> registered) {
    this.registered = registered;
    this.store = store;
    this.applier = applier;
    this.executor = executor;
    this.backendId = backendId;
    this.config = config;
    this.remote = remote;
    this.models = DeployedModels.empty(config.extraClasses());
    for (int i = 0; i < LOCK_STRIPES; i++) {
      locks[i] = new ReentrantLock();
    }
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
    calls.incrementAndGet();
    try {
      return CompletableFuture.supplyAsync(() -> run(request), executor).thenCompose(f -> f);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(new BackendUnavailableException("the Data Service is stopping"));
    }
  }

  // The object's stripe stays locked until its changes are stored, so the calls of one object are
  // applied in the order they ran; nested calls on other objects take no lock (no lock cycles).
  private CompletableFuture<byte[]> run(ExecutionRequest request) {
    ReentrantLock lock = locks[Math.floorMod(request.objectId().hashCode(), LOCK_STRIPES)];
    lock.lock();
    try {
      if (models.find(request.className()) == null) {
        catchUp();
      }
      CallContext ctx = new CallContext(this, models, request.session());
      byte[] value = NOTHING;
      DataClayException error = null;
      try {
        value = Runtimes.runWith(ctx, () -> perform(ctx, request));
      } catch (DataClayException e) {
        error = e;
      } catch (ModelFailure e) {
        error = remoteError(e.getCause());
      } catch (RuntimeException e) {
        error = new InternalException("the Java environment failed running " + request.name() + ": " + e);
      }
      CallContext.Changes changes;
      try {
        changes = ctx.changes(sequence::incrementAndGet);
      } catch (DataClayException e) {
        // nothing of the call is stored: its changes could not be encoded
        return CompletableFuture.failedFuture(e);
      }
      ExecutionResult result = new ExecutionResult(error == null ? value : NOTHING, error, changes.created(),
          changes.deltas());
      return applier.apply(this, request, result, sequences);
    } finally {
      lock.unlock();
    }
  }

  private byte[] perform(CallContext ctx, ExecutionRequest request) {
    DataClayObject target = ctx.load(request.objectId());
    switch (request.kind()) {
      case CALL_METHOD: {
        Object[] args = request.payload().length == 0 ? new Object[0] : arguments(ctx, request);
        Object result;
        try {
          result = ctx.invoke(target, MethodTable.find(target.getClass(), request.name()), args);
        } catch (DataClayException e) {
          throw e;
        } catch (Throwable t) {
          throw new ModelFailure(t);
        }
        return ctx.codec().encode(result, ctx).value();
      }
      case GET_FIELD:
        return ctx.codec().encodeField(target, request.name(), ctx).value();
      case SET_FIELD:
        ctx.codec().decodeField(target, request.name(), request.payload(), ctx);
        return NOTHING;
      default:
        throw new InvalidArgumentException("unknown execution kind " + request.kind());
    }
  }

  private static Object[] arguments(CallContext ctx, ExecutionRequest request) {
    Object args = ctx.codec().decode(request.payload(), ctx, "arguments of " + request.name());
    if (!(args instanceof Object[] array)) {
      throw new InvalidArgumentException("arguments of " + request.name() + " must be an encoded Object[], not a "
          + (args == null ? "null" : args.getClass().getName()));
    }
    return array;
  }

  private static RemoteException remoteError(Throwable t) {
    StringWriter trace = new StringWriter();
    t.printStackTrace(new PrintWriter(trace));
    return new RemoteException(t.getClass().getName(), t.getMessage() == null ? "" : t.getMessage(), NOTHING,
        trace.toString());
  }

  /** An exception model code threw, carried out of the call unchanged. */
  private static final class ModelFailure extends RuntimeException {
    ModelFailure(Throwable cause) {
      super(cause);
    }
  }

  // A class this environment does not know yet may belong to a model deployed while it was not
  // told (models are also installed at start without reaching environments): fetch the registered
  // models once and install the newer ones.
  private void catchUp() {
    try {
      deploy(registered.get());
    } catch (RuntimeException e) {
      LOG.warning("could not fetch the registered Java models: " + e.getMessage());
    }
  }

  @Override
  public synchronized void deploy(List<ModelBundle> bundles) {
    DeployedModels next = models;
    RuntimeException failure = null;
    for (ModelBundle b : bundles) {
      Long installed = versions.get(b.namespace());
      if (b.language() != Language.JAVA || (installed != null && installed >= b.version())) {
        continue;
      }
      try {
        next = next.with(b, config.extraClasses());
        versions.put(b.namespace(), b.version());
        LOG.info("deployed Java model " + b.namespace() + " version " + b.version());
      } catch (RuntimeException e) {
        failure = e;
      }
    }
    models = next;
    if (failure != null) {
      throw failure;
    }
  }

  /** Drops the namespaces' class loaders; a later deploy of them loads their code afresh. */
  @Override
  public synchronized void withdraw(Collection<String> namespaces) {
    models = models.without(namespaces, config.extraClasses());
    versions.keySet().removeAll(namespaces);
  }

  @Override
  public CompletableFuture<Void> evict(Collection<UUID> ids) {
    return CompletableFuture.completedFuture(null); // nothing to drop: every call loads the stored state afresh
  }

  @Override
  public EnvironmentStatus status() {
    return new EnvironmentStatus(Language.JAVA, !closed, ProcessHandle.current().pid(), 0, calls.get());
  }

  @Override
  public void close() {
    closed = true;
    remote.close();
  }

  ObjectStore store() {
    return store;
  }

  UUID backendId() {
    return backendId;
  }

  RemoteObjects remote() {
    return remote;
  }

  @SuppressWarnings("unchecked")
  static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
    throw (T) t;
  }
}
