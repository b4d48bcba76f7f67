package io.dataclay.ds.ee;

import io.dataclay.common.Language;
import io.dataclay.ds.codec.Messages;
import io.dataclay.ds.environments.EnvironmentStatus;
import io.dataclay.ds.environments.ExecutionEnvironment;
import io.dataclay.ds.environments.ExecutionRequest;
import io.dataclay.ds.models.ModelBundle;
import io.dataclay.ds.session.Session;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.QuotaExceededException;
import io.dataclay.proto.DataServiceMessage;
import io.dataclay.proto.EnvironmentHello;
import io.dataclay.proto.ModelList;
import io.opentelemetry.context.Context;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Logger;

/**
 * The execution environment of one account on this backend: a supervised, confined process and
 * its link. At most {@code threads} of the account's calls run in it at once; more wait here, in
 * arrival order, up to {@code maxQueued} (then QUOTA_EXCEEDED), so one account can fill only its
 * own process. Calls that arrive while it is (re)starting wait up to {@code waitMs}, then fail with
 * BACKEND_UNAVAILABLE. No thread is parked per waiting or running call.
 */
final class AccountEnvironment implements ExecutionEnvironment, EnvironmentSupervisor.Listener {
  /** How long a process that closed its own link may take to exit before it is stopped. */
  static final long LEAVE_GRACE_MS = 5000;
  private static final Logger LOG = Logger.getLogger(AccountEnvironment.class.getName());

  private record Waiting(ExecutionRequest request, CompletableFuture<byte[]> future, long since, Context trace) {}

  /** What a spare process (started ahead of an account's first call) is called until one adopts it. */
  static final String SPARE = "(spare)";

  private volatile String account;
  private volatile Session session;
  private final Language language;
  private final int slot;
  private final LinkServices services;
  private final EnvironmentSettings settings;
  private final long waitMs;
  private final LongAdder calls = new LongAdder();
  private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
  private EnvironmentSupervisor supervisor;
  private EnvironmentLink link;
  private volatile EnvironmentLink ready;
  private volatile List<ModelBundle> models = List.of();
  // Orders the deployments sent to a process: a process that attaches while an adopting account's
  // models arrive gets them either in its first message or in the one after, never neither.
  private final Object deploying = new Object();
  private final StoredReads storedReads = new StoredReads();
  private volatile long lastUsedMs = System.currentTimeMillis();
  private volatile String problem = "";
  private int running;
  private ScheduledFuture<?> waitCheck;
  private boolean closed;

  /**
   * The environment of {@code session}'s account for {@code language} objects, in sandbox slot
   * {@code slot}; the session (its first call's) decides which models the account may use. With no
   * session it is a spare: its process starts, confines itself and waits, with no model, for an
   * account to {@link #adopt} it.
   */
  AccountEnvironment(Session session, Language language, int slot, LinkServices services,
      EnvironmentSettings settings, long waitMs) {
    this.account = session == null ? SPARE : session.username();
    this.session = session;
    this.language = language;
    this.slot = slot;
    this.services = services;
    this.settings = settings;
    this.waitMs = waitMs;
  }

  /** Starts supervising the process of {@code launch}, whose private directory is {@code tmp}; call once. */
  void start(EnvironmentLaunch launch, String tmp) {
    EnvironmentSupervisor s = new EnvironmentSupervisor(launch.command(slot, tmp), launch.environment(),
        services.timer(), new RestartBackoff(), this, language.name().toLowerCase() + " environment " + slot,
        (spawn, stderr) -> EnvironmentOutput.copy(stderr, language.name().toLowerCase(), this::account, spawn.pid(),
            settings.outputBytesPerSecond()));
    synchronized (this) {
      supervisor = s;
    }
    s.start();
  }

  /** The account this environment serves. */
  String account() {
    return account;
  }

  /** The session its account's models are chosen by (the first call's); null for a spare. */
  Session session() {
    return session;
  }

  /** Makes a spare this account's (it has run nothing yet); its models follow with {@link #deploy}. */
  void adopt(Session first) {
    session = first;
    account = first.username();
    lastUsedMs = System.currentTimeMillis();
  }

  /** Its sandbox slot (distinct among the live environments of a language on this backend). */
  int slot() {
    return slot;
  }

  @Override
  public Language language() {
    return language;
  }

  /** When it last got a call (epoch ms). */
  long lastUsedMs() {
    return lastUsedMs;
  }

  /** Calls running in it or waiting for it. */
  synchronized int busy() {
    return running + waiting.size();
  }

  @Override
  public CompletableFuture<byte[]> execute(ExecutionRequest request) {
    calls.increment();
    lastUsedMs = System.currentTimeMillis();
    CompletableFuture<byte[]> future = new CompletableFuture<>();
    EnvironmentLink now;
    synchronized (this) {
      if (closed) {
        future.completeExceptionally(new BackendUnavailableException("the execution environment of " + account
            + " is stopping; retry the call"));
        return future;
      }
      now = ready;
      if (now == null || running >= settings.threads() || !waiting.isEmpty()) {
        if (waiting.size() >= settings.maxQueued()) {
          future.completeExceptionally(new QuotaExceededException(account + " has " + running + " calls running and "
              + waiting.size() + " waiting on this backend, the most it may (" + EnvironmentSettings.THREADS + ", "
              + EnvironmentSettings.MAX_QUEUED + "): retry when some have finished"));
          return future;
        }
        waiting.add(new Waiting(request, future, System.currentTimeMillis(), Context.current()));
        scheduleWaitCheck();
        return future;
      }
      running++;
    }
    send(now, request, future, Context.current());
    return future;
  }

  // Sends on `to`; if that link ended meanwhile, the call waits for the next process.
  // The call's trace context goes with it: a waiting call is sent from another thread.
  private void send(EnvironmentLink to, ExecutionRequest request, CompletableFuture<byte[]> future, Context trace) {
    if (to.submit(request, future, trace)) {
      future.whenComplete((v, e) -> finished());
      return;
    }
    synchronized (this) {
      running--;
      waiting.addFirst(new Waiting(request, future, System.currentTimeMillis(), trace));
      scheduleWaitCheck();
    }
  }

  private void finished() {
    synchronized (this) {
      running--;
    }
    drain();
  }

  // Sends waiting calls while the process is ready and has free threads.
  private void drain() {
    while (true) {
      Waiting next;
      EnvironmentLink to;
      synchronized (this) {
        to = ready;
        if (to == null || closed || running >= settings.threads() || waiting.isEmpty()) {
          return;
        }
        next = waiting.poll();
        running++;
      }
      send(to, next.request(), next.future(), next.trace());
    }
  }

  // Calls waiting while no process is ready fail after waitMs; while one is ready they wait for a thread.
  private void scheduleWaitCheck() {
    if (waitCheck == null || waitCheck.isDone()) {
      waitCheck = services.timer().schedule(this::expireWaiting, waitMs, TimeUnit.MILLISECONDS);
    }
  }

  private void expireWaiting() {
    List<Waiting> expired = new ArrayList<>();
    synchronized (this) {
      waitCheck = null;
      if (ready == null) {
        long now = System.currentTimeMillis();
        while (!waiting.isEmpty() && now - waiting.peek().since() >= waitMs) {
          expired.add(waiting.poll());
        }
      }
      if (!waiting.isEmpty()) {
        scheduleWaitCheck();
      }
    }
    String why = problem.isEmpty() ? "it did not come up within " + waitMs + " ms" : problem;
    for (Waiting w : expired) {
      w.future().completeExceptionally(new BackendUnavailableException("the " + language + " execution environment of "
          + account + " on this backend is not running (" + why + "); retry shortly"));
    }
  }

  /** The models this account may use, whole; sent to the process now and to every process started later. */
  @Override
  public void deploy(List<ModelBundle> usable) {
    synchronized (deploying) {
      storedReads.forget(); // what the process vouched for holds for the code it ran
      models = List.copyOf(usable);
      EnvironmentLink to = ready;
      if (to != null) {
        to.send(deployMessage(models)); // queued: a call submitted after this returns runs with them
      }
    }
  }

  /**
   * Restarts the process if it ran any call: code of the withdrawn models may have been loaded and
   * may still run. One that ran nothing never loaded model code, and the deployment sent before
   * this already took their files away.
   */
  @Override
  public void withdraw(Collection<String> namespaces) {
    EnvironmentSupervisor s;
    EnvironmentSupervisor.Spawn current;
    EnvironmentLink l;
    synchronized (this) {
      s = supervisor;
      current = s == null ? null : s.current();
      l = link;
    }
    if (current != null && l != null && l.submitted() > 0) {
      LOG.info("restarting the execution environment of " + account + ": models " + namespaces + " were withdrawn");
      s.terminate(current, "models " + namespaces + " were withdrawn");
    }
  }

  /** The reads this account's processes vouched are answered by a stored field. */
  StoredReads storedReads() {
    return storedReads;
  }

  @Override
  public String storedField(ExecutionRequest request) {
    return storedReads.field(request);
  }

  @Override
  public boolean holdsCurrent(UUID id) {
    EnvironmentLink l = link;
    return l != null && l.holdsNow(id);
  }

  @Override
  public CompletableFuture<Void> evict(Collection<UUID> ids) {
    EnvironmentLink to = ready;
    return to == null ? CompletableFuture.completedFuture(null) : to.evict(ids);
  }

  @Override
  public int unloadIdle(String account) {
    EnvironmentLink to = ready;
    if (to == null) {
      return 0;
    }
    to.unloadIdle();
    return 1;
  }

  @Override
  public EnvironmentStatus status() {
    return new EnvironmentStatus(language, ready != null, 0, restarts(), calls.sum(), settings.confinement(),
        List.of(process()), problem);
  }

  /** This environment's process, for the status. */
  EnvironmentStatus.Process process() {
    EnvironmentLink l = ready;
    EnvironmentSupervisor.Spawn current = supervisor == null ? null : supervisor.current();
    EnvironmentHello hello = l == null ? null : l.hello();
    return new EnvironmentStatus.Process(account, current == null ? 0 : current.pid(), l != null, restarts(),
        calls.sum(), l == null ? 0 : l.inFlight(), hello == null ? "" : hello.getConfinement());
  }

  /** Restarts of its process. */
  int restarts() {
    EnvironmentSupervisor s = supervisor;
    return s == null ? 0 : s.restarts();
  }

  /** Why the last process could not start, or empty. */
  String problem() {
    return problem;
  }

  @Override
  public void close() {
    List<Waiting> abandoned;
    EnvironmentSupervisor s;
    EnvironmentLink l;
    synchronized (this) {
      closed = true;
      abandoned = new ArrayList<>(waiting);
      waiting.clear();
      s = supervisor;
      l = link;
    }
    for (Waiting w : abandoned) {
      w.future().completeExceptionally(new BackendUnavailableException("the execution environment of " + account
          + " stopped before the call ran; retry the call"));
    }
    if (s != null) {
      s.close(); // first: the process it stops is not restarted
    }
    if (l != null) {
      l.close("the execution environment of " + account + " is stopping");
    }
  }

  // ---- the process ----------------------------------------------------------------------------

  @Override
  public void spawned(EnvironmentSupervisor.Spawn spawn) {
    Process p = spawn.process();
    FramedStream stream = spawn.input() == null ? new FramedStream(p.getInputStream(), p.getOutputStream())
        : new FramedStream(p.getInputStream(), spawn.input());
    EnvironmentLink fresh = new EnvironmentLink(this, stream,
        services, language.name().toLowerCase() + "-" + account + "-" + spawn.generation(), settings.callTimeoutMs());
    synchronized (this) {
      if (closed) {
        fresh.close("the execution environment of " + account + " is stopping");
        return;
      }
      link = fresh;
    }
    fresh.start();
    services.timer().schedule(() -> {
      if (fresh.hello() == null && !fresh.closed()) {
        problem = "it sent no hello within " + waitMs + " ms";
        LOG.warning("the execution environment of " + account + " " + problem + ": restarting it");
        fresh.close(problem);
      }
    }, waitMs, TimeUnit.MILLISECONDS);
  }

  /** Called by the link when its hello arrived: it gets the models, then the calls that waited. */
  void attached(EnvironmentLink attached, EnvironmentHello hello) {
    synchronized (this) {
      if (link != attached || closed) {
        return;
      }
    }
    synchronized (deploying) { // a deploy meanwhile either comes first (sent here) or finds the process ready
      attached.send(deployMessage(models));
      synchronized (this) {
        ready = attached;
        problem = "";
      }
    }
    LOG.info("the " + language + " execution environment of " + account + " (pid " + hello.getPid() + ", "
        + hello.getRuntimeVersion() + ", confined: " + hello.getConfinement() + ") attached");
    drain();
  }

  @Override
  public void exited(EnvironmentSupervisor.Spawn gone, int exitCode) {
    EnvironmentLink l;
    synchronized (this) {
      l = link;
    }
    if (gone.process() == null) {
      problem = "it could not be started; see the Data Service's log";
    } else if (l != null && l.hello() == null && exitCode != 0) {
      problem = "it exited with code " + exitCode + " before it attached; see the Data Service's log for why";
    }
    if (l != null) {
      l.close("the execution environment of " + account + " exited with code " + exitCode);
    }
  }

  /**
   * Called by a link when it ended: forgets it and stops its process, which the supervisor then
   * restarts. A process that closed its link itself is leaving on its own (it does so to restart
   * after a model change, exiting with code 3), so it gets {@link #LEAVE_GRACE_MS} to exit.
   */
  void linkClosed(EnvironmentLink closedLink, boolean byEnvironment) {
    EnvironmentSupervisor s;
    EnvironmentSupervisor.Spawn owner;
    synchronized (this) {
      if (link != closedLink) {
        return;
      }
      link = null;
      if (ready == closedLink) {
        ready = null;
      }
      s = closed ? null : supervisor;
      owner = s == null ? null : s.current();
      if (!waiting.isEmpty()) {
        scheduleWaitCheck();
      }
    }
    if (s == null || owner == null) {
      return;
    }
    if (byEnvironment) {
      services.timer().schedule(() -> s.terminate(owner, "it left on its own, to load changed model code"),
          LEAVE_GRACE_MS, TimeUnit.MILLISECONDS);
    } else {
      s.terminate(owner, "its link ended");
    }
  }

  private static DataServiceMessage deployMessage(List<ModelBundle> bundles) {
    ModelList.Builder list = ModelList.newBuilder();
    bundles.forEach(m -> list.addModels(Messages.model(m)));
    return DataServiceMessage.newBuilder().setDeploy(list).build();
  }
}
