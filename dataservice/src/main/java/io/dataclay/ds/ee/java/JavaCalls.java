package io.dataclay.ds.ee.java;

import io.dataclay.api.DataClayObject;
import io.dataclay.api.Runtimes;
import io.dataclay.common.Language;
import io.dataclay.ds.environments.ExecutionRequest;
import io.dataclay.ds.environments.ExecutionResult;
import io.dataclay.ds.models.ModelBundle;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.RemoteException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * Runs Java methods and field accesses: the deployed models, and one call on instances loaded for
 * it (from wherever its {@link CallHost} reads), turned into an {@link ExecutionResult} (the value
 * or error, the fields whose encoding changed, the objects it made persistent). Calls on one
 * object run one at a time, and the caller stores the result before the next one on that object
 * starts; nested calls on other objects take no lock (no lock cycles). Used in-process by
 * {@link JavaEnvironment} and in a confined process by {@link EnvironmentMain}.
 */
final class JavaCalls {
  private static final Logger LOG = Logger.getLogger(JavaCalls.class.getName());
  private static final byte[] NOTHING = new byte[0];
  private static final int LOCK_STRIPES = 256;

  private final JavaEnvironmentConfig config;
  private final Supplier<List<ModelBundle>> registered;
  private final ReentrantLock[] locks = new ReentrantLock[LOCK_STRIPES];
  private final AtomicLong sequence = new AtomicLong();
  private final Map<String, Long> versions = new HashMap<>();
  private volatile DeployedModels models;

  /**
   * Calls with {@code config}'s allow-list; a class not deployed yet makes it fetch {@code
   * registered} once (null: it waits for deployments instead).
   */
  JavaCalls(JavaEnvironmentConfig config, Supplier<List<ModelBundle>> registered) {
    this.config = config;
    this.registered = registered;
    this.models = DeployedModels.empty(config.extraClasses());
    for (int i = 0; i < LOCK_STRIPES; i++) {
      locks[i] = new ReentrantLock();
    }
  }

  /**
   * Runs {@code request} on {@code host} and hands its result to {@code then}, still holding the
   * object's lock (so the next call on the object sees what {@code then} stored); returns what
   * {@code then} returns.
   */
  <R> R run(CallHost host, ExecutionRequest request, Function<ExecutionResult, R> then) {
    ReentrantLock lock = locks[Math.floorMod(request.objectId().hashCode(), LOCK_STRIPES)];
    lock.lock();
    try {
      if (registered != null && models.find(request.className()) == null) {
        catchUp();
      }
      CallContext ctx = new CallContext(host, models, request.session());
      byte[] value = NOTHING;
      DataClayException error = null;
      String label = CallOutput.label(request.className(), request.name(), request.objectId());
      try {
        value = CallOutput.serving(label, () -> Runtimes.runWith(ctx, () -> perform(ctx, request)));
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
        return then.apply(new ExecutionResult(NOTHING, e, List.of(), List.of()));
      }
      return then.apply(new ExecutionResult(error == null ? value : NOTHING, error, changes.created(),
          changes.deltas()));
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

  /** Installs the Java models of {@code bundles} newer than those installed; the first failure is thrown after the rest. */
  synchronized void deploy(List<ModelBundle> bundles) {
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

  /** Drops the models of {@code namespaces}: calls starting from now on do not find their classes. */
  synchronized void withdraw(Collection<String> namespaces) {
    models = models.without(namespaces, config.extraClasses());
    namespaces.forEach(versions::remove);
  }

  /** The namespaces installed now. */
  java.util.Set<String> namespaces() {
    return models.namespaces();
  }

  @SuppressWarnings("unchecked")
  static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
    throw (T) t;
  }
}
