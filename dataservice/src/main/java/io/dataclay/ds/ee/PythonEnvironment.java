package io.dataclay.ds.ee;

import io.dataclay.common.Language;
import io.dataclay.ds.service.EnvironmentStatus;
import io.dataclay.ds.service.ExecutionEnvironment;
import io.dataclay.ds.service.ExecutionRequest;
import io.dataclay.ds.service.ModelBundle;
import io.dataclay.ds.service.ResultApplier;
import io.dataclay.ds.servicer.Messages;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.proto.DataServiceMessage;
import io.dataclay.proto.EnvironmentHello;
import io.dataclay.proto.EvictRequest;
import io.dataclay.proto.ModelList;
import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Logger;

/**
 * The Python execution environment seen from its Data Service: a supervised child process that
 * connects back to a private Unix socket and proves itself with the secret of its spawn; calls
 * go down that one connection. Calls that arrive while it is (re)starting wait up to
 * {@code waitMs}, then fail with BACKEND_UNAVAILABLE; a connection gets the same time to send its
 * hello, so a silent one cannot hold the link's only slot. No thread is parked per waiting or
 * in-flight call.
 */
public final class PythonEnvironment implements ExecutionEnvironment, EnvironmentSupervisor.Listener {
  /** How long an environment that closed its own connection may take to exit before it is stopped. */
  static final long LEAVE_GRACE_MS = 5000;
  private static final Logger LOG = Logger.getLogger(PythonEnvironment.class.getName());

  private final ResultApplier applier;
  private final ScheduledExecutorService timer;
  private final Executor blocking;
  private final long waitMs;
  private final LongAdder calls = new LongAdder();
  private final WaitingCalls waiting;
  private LinkAcceptor acceptor;
  private long connections;
  private EnvironmentSupervisor supervisor;
  private EnvironmentSupervisor.Spawn spawn;
  private EnvironmentLink attached;
  private volatile EnvironmentLink ready;
  private boolean closed;

  /**
   * An environment whose results are stored by {@code applier}; timeouts run on {@code timer}, and
   * writes that must not happen on an inline call's thread on {@code blocking}.
   */
  public PythonEnvironment(ResultApplier applier, ScheduledExecutorService timer, Executor blocking, long waitMs) {
    this.applier = applier;
    this.timer = timer;
    this.blocking = blocking;
    this.waitMs = waitMs;
    this.waiting = new WaitingCalls(timer, waitMs);
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

  /** Restarts the process: it may have imported these models' modules, whose files are already deleted. */
  @Override
  public void withdraw(Collection<String> namespaces) {
    EnvironmentSupervisor s;
    synchronized (this) {
      s = closed ? null : supervisor;
    }
    EnvironmentSupervisor.Spawn current = s == null ? null : s.current();
    if (current != null) {
      LOG.info("restarting the Python execution environment: models " + namespaces + " were withdrawn");
      s.terminate(current);
    }
  }

  /**
   * Asks the environment to drop objects from memory. Sent from the pool, never from the result
   * reader that calls this: if the reader blocked on a full socket while the environment's workers
   * blocked writing results it does not read, the two sides would deadlock. The future completes
   * once the frame is written: the environment reads frames in order, so a call sent after that
   * sees the eviction. (If the link fails meanwhile, the next environment starts with nothing.)
   */
  @Override
  public CompletableFuture<Void> evict(Collection<UUID> ids) {
    EnvironmentLink link = ready;
    if (link == null || ids.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    EvictRequest.Builder evict = EvictRequest.newBuilder();
    ids.forEach(id -> evict.addIds(id.toString()));
    DataServiceMessage message = DataServiceMessage.newBuilder().setEvict(evict).build();
    return CompletableFuture.runAsync(() -> link.send(message), blocking);
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
    List<WaitingCalls.Call> abandoned;
    EnvironmentSupervisor s;
    EnvironmentLink link;
    LinkAcceptor a;
    synchronized (this) {
      closed = true;
      abandoned = waiting.takeAll();
      s = supervisor;
      link = attached;
      a = acceptor;
    }
    if (a != null) {
      a.close();
    }
    for (WaitingCalls.Call w : abandoned) {
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
   * Binds the socket the process connects to (a private directory under java.io.tmpdir); call
   * once, before {@link #start}. Returns the socket's path, for DATACLAY_EE_SOCKET.
   */
  public Path listen() throws IOException {
    synchronized (this) {
      if (acceptor != null || closed) {
        throw new IllegalStateException("the Python environment already listens or was closed");
      }
      acceptor = LinkAcceptor.open(this::accepted);
      return acceptor.socket();
    }
  }

  /** Takes a new connection unless one is already attached (or pending its hello): then it is closed at once. */
  private void accepted(SocketChannel connection) {
    EnvironmentLink link;
    synchronized (this) {
      if (closed || attached != null) {
        LOG.warning("closed an execution environment connection: "
            + (closed ? "the Data Service is shutting down" : "another one is attached"));
        LinkAcceptor.closeQuietly(connection);
        return;
      }
      try {
        link = new EnvironmentLink(this, new FramedChannel(connection), applier, blocking, ++connections);
      } catch (IOException e) {
        LOG.warning("could not set up an execution environment connection: " + e.getMessage());
        LinkAcceptor.closeQuietly(connection);
        return;
      }
      attached = link;
    }
    link.start();
    timer.schedule(() -> {
      if (link.spawn() == null) {
        LOG.warning("closed an execution environment connection that sent no hello within " + waitMs + " ms");
        link.close("no hello within " + waitMs + " ms");
      }
    }, waitMs, TimeUnit.MILLISECONDS);
  }

  /**
   * Checks a connection's hello: it must carry the secret the current process was spawned with
   * (compared in constant time) and a process ID. On success the link is ready and the calls
   * that waited for it are sent; otherwise returns why it was refused.
   */
  String handshake(EnvironmentLink link, EnvironmentHello hello) {
    List<WaitingCalls.Call> flush;
    synchronized (this) {
      if (attached != link || closed) {
        return "the connection is no longer the attached one";
      }
      if (spawn == null || !sameSecret(spawn.secret(), hello.getSecret())) {
        return "wrong, missing or stale secret in hello";
      }
      if (hello.getPid() <= 0) {
        return "hello.pid must be the environment's process ID, not " + hello.getPid();
      }
      link.authenticated(spawn);
      ready = link;
      flush = waiting.takeAll();
    }
    LOG.info("the Python execution environment (pid " + hello.getPid() + ", " + hello.getRuntimeVersion()
        + ") attached");
    for (WaitingCalls.Call w : flush) {
      if (!link.submit(w.request(), w.future())) {
        await(w.request(), w.future());
      }
    }
    return null;
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

  /**
   * Called by a link when it ended: forgets it and, when it had proved to be the current
   * process's, stops that process, which is then restarted. An environment that closed the
   * connection itself is leaving on its own (it does so to restart after a model change, exiting
   * with code 3), so it gets {@link #LEAVE_GRACE_MS} to exit before it is stopped; after a broken
   * link it is stopped at once. A connection refused before its hello proved nothing about any
   * process, so no process is stopped for it.
   */
  void linkClosed(EnvironmentLink link, boolean endedByEnvironment) {
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
    EnvironmentSupervisor.Spawn owner = link.spawn();
    if (s == null || owner == null) {
      return;
    }
    if (endedByEnvironment) {
      timer.schedule(() -> s.terminate(owner), LEAVE_GRACE_MS, TimeUnit.MILLISECONDS);
    } else {
      s.terminate(owner);
    }
  }

  private static boolean sameSecret(String expected, String given) {
    return MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), given.getBytes(StandardCharsets.UTF_8));
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
        waiting.add(request, future);
        return;
      }
    }
    if (!link.submit(request, future)) {
      future.completeExceptionally(new BackendUnavailableException(
          "the Python execution environment's connection closed while the call was sent"));
    }
  }
}
