package io.dataclay.ds.ee;

import io.dataclay.common.Language;
import io.dataclay.ds.service.EnvironmentStatus;
import io.dataclay.ds.service.ExecutionEnvironment;
import io.dataclay.ds.service.ExecutionRequest;
import io.dataclay.ds.service.ModelBundle;
import io.dataclay.ds.service.ResultApplier;
import io.dataclay.ds.servicer.Messages;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.NotAuthenticatedException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.proto.DataServiceMessage;
import io.dataclay.proto.EvictRequest;
import io.dataclay.proto.ModelList;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The Python execution environment seen from its Data Service: a supervised child process that
 * dials back and attaches one stream (authenticated by the secret of its spawn), through which
 * calls are sent. Calls that arrive while it is (re)starting wait up to {@code waitMs}, then fail
 * with BACKEND_UNAVAILABLE; no thread is parked per waiting or in-flight call.
 */
public final class PythonEnvironment implements ExecutionEnvironment, EnvironmentSupervisor.Listener {
  /** How long an environment that closed its own stream may take to exit before it is stopped. */
  static final long LEAVE_GRACE_MS = 5000;

  private record Waiting(ExecutionRequest request, CompletableFuture<byte[]> future, ScheduledFuture<?> timeout) {}

  private final ResultApplier applier;
  private final ScheduledExecutorService timer;
  private final long waitMs;
  private final LongAdder calls = new LongAdder();
  private final Queue<Waiting> waiting = new ArrayDeque<>();
  private EnvironmentSupervisor supervisor;
  private EnvironmentSupervisor.Spawn spawn;
  private EnvironmentLink attached;
  private volatile EnvironmentLink ready;
  private boolean closed;

  /** An environment whose results are stored by {@code applier}; timeouts run on {@code timer}. */
  public PythonEnvironment(ResultApplier applier, ScheduledExecutorService timer, long waitMs) {
    this.applier = applier;
    this.timer = timer;
    this.waitMs = waitMs;
  }

  /** Starts supervising the process; call once. */
  public void start(EnvironmentSupervisor supervisor) {
    synchronized (this) {
      if (this.supervisor != null) {
        throw new IllegalStateException("the Python environment was already started");
      }
      this.supervisor = supervisor;
    }
    supervisor.start();
  }

  @Override
  public Language language() {
    return Language.PYTHON;
  }

  @Override
  public CompletableFuture<byte[]> execute(ExecutionRequest request) {
    calls.increment();
    CompletableFuture<byte[]> future = new CompletableFuture<>();
    EnvironmentLink link = ready;
    if (link == null || !link.submit(request, future)) {
      await(request, future);
    }
    return future;
  }

  @Override
  public void deploy(List<ModelBundle> models) {
    EnvironmentLink link = ready;
    if (link != null) {
      ModelList.Builder list = ModelList.newBuilder();
      models.forEach(m -> list.addModels(Messages.model(m)));
      link.send(DataServiceMessage.newBuilder().setDeploy(list).build());
    }
  }

  @Override
  public void evict(Collection<UUID> ids) {
    EnvironmentLink link = ready;
    if (link != null && !ids.isEmpty()) {
      EvictRequest.Builder evict = EvictRequest.newBuilder();
      ids.forEach(id -> evict.addIds(id.toString()));
      link.send(DataServiceMessage.newBuilder().setEvict(evict).build());
    }
  }

  @Override
  public EnvironmentStatus status() {
    EnvironmentSupervisor s;
    synchronized (this) {
      s = supervisor;
    }
    EnvironmentSupervisor.Spawn current = s == null ? null : s.current();
    boolean alive = ready != null && current != null && current.alive();
    return new EnvironmentStatus(Language.PYTHON, alive, current == null || !current.alive() ? 0 : current.pid(),
        s == null ? 0 : s.restarts(), calls.sum());
  }

  @Override
  public void close() {
    List<Waiting> abandoned;
    EnvironmentSupervisor s;
    EnvironmentLink link;
    synchronized (this) {
      closed = true;
      abandoned = new ArrayList<>(waiting);
      waiting.clear();
      s = supervisor;
      link = attached;
    }
    for (Waiting w : abandoned) {
      w.timeout().cancel(false);
      w.future().completeExceptionally(new BackendUnavailableException("the Data Service is shutting down"));
    }
    if (link != null) {
      link.close("the Data Service is shutting down");
    }
    if (s != null) {
      s.close();
    }
  }

  /**
   * Accepts the stream of the current process: {@code secret} must be the one it was spawned with
   * and no other stream may be attached.
   *
   * @throws NotAuthenticatedException for a missing, wrong or stale secret
   * @throws PermissionDeniedException when a stream is already attached
   */
  public synchronized EnvironmentLink attach(String secret, ServerCallStreamObserver<io.dataclay.proto.DataServiceMessage> out) {
    if (closed || spawn == null || secret == null || !spawn.secret().equals(secret)) {
      throw new NotAuthenticatedException("wrong or stale execution environment secret");
    }
    if (attached != null) {
      throw new PermissionDeniedException("an execution environment is already attached to this Data Service");
    }
    attached = new EnvironmentLink(this, spawn, out, applier);
    return attached;
  }

  @Override
  public synchronized void spawned(EnvironmentSupervisor.Spawn spawn) {
    this.spawn = spawn;
  }

  @Override
  public void exited(EnvironmentSupervisor.Spawn gone, int exitCode) {
    EnvironmentLink link;
    synchronized (this) {
      if (spawn == gone) {
        spawn = null;
      }
      link = attached != null && attached.spawn() == gone ? attached : null;
    }
    if (link != null) {
      link.close("the Python execution environment exited with code " + exitCode);
    }
  }

  /** Called by a link once its hello arrived: sends the calls that waited for it. */
  void ready(EnvironmentLink link) {
    List<Waiting> flush;
    synchronized (this) {
      if (attached != link) {
        return;
      }
      ready = link;
      flush = new ArrayList<>(waiting);
      waiting.clear();
    }
    for (Waiting w : flush) {
      w.timeout().cancel(false);
      if (!link.submit(w.request(), w.future())) {
        await(w.request(), w.future());
      }
    }
  }

  /**
   * Called by a link when its stream ended: forgets it and stops its process, which is then
   * restarted. An environment that ended the stream itself is leaving on its own (it does so to
   * restart after a model change, exiting with code 3), so it gets {@link #LEAVE_GRACE_MS} to exit
   * before it is stopped; after a broken stream it is stopped at once.
   */
  void broken(EnvironmentLink link, boolean endedByEnvironment) {
    EnvironmentSupervisor s;
    synchronized (this) {
      if (attached != link) {
        return;
      }
      attached = null;
      if (ready == link) {
        ready = null;
      }
      s = closed ? null : supervisor;
    }
    if (s == null) {
      return;
    }
    if (endedByEnvironment) {
      timer.schedule(() -> s.terminate(link.spawn()), LEAVE_GRACE_MS, TimeUnit.MILLISECONDS);
    } else {
      s.terminate(link.spawn());
    }
  }

  private void await(ExecutionRequest request, CompletableFuture<byte[]> future) {
    EnvironmentLink link;
    synchronized (this) {
      if (closed) {
        future.completeExceptionally(new BackendUnavailableException("the Data Service is shutting down"));
        return;
      }
      link = ready;
      if (link == null) {
        Waiting[] self = new Waiting[1];
        ScheduledFuture<?> timeout = timer.schedule(() -> expire(self[0]), waitMs, TimeUnit.MILLISECONDS);
        self[0] = new Waiting(request, future, timeout);
        waiting.add(self[0]);
        return;
      }
    }
    if (!link.submit(request, future)) {
      future.completeExceptionally(new BackendUnavailableException(
          "the Python execution environment's stream closed while the call was sent"));
    }
  }

  private void expire(Waiting w) {
    synchronized (this) {
      if (!waiting.remove(w)) {
        return;
      }
    }
    w.future().completeExceptionally(new BackendUnavailableException(
        "the Python execution environment is not running (it did not come up within " + waitMs + " ms)"));
  }
}
