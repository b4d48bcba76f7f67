package io.dataclay.ds.ee;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Keeps one execution-environment process running: spawns it (its standard input and output are
 * its link, its standard error goes to the Data Service's log, through an {@link ErrorOutput} if
 * given), restarts it with {@link RestartBackoff}
 * when it exits, counts restarts, and stops it on close (SIGTERM, then SIGKILL after 2 s, with
 * whatever it started that is still its descendant). It gets only the environment it is given.
 *
 * <p>Processes are spawned on the timer's thread, which lives as long as the Data Service: a
 * confined process asks to be killed when the thread that started it ends (PR_SET_PDEATHSIG is
 * per thread), so it must not be started by a pool thread that may retire.
 */
public final class EnvironmentSupervisor {
  private static final long KILL_AFTER_MS = 2000;
  private static final Logger LOG = Logger.getLogger(EnvironmentSupervisor.class.getName());

  /** Takes a started process's standard error (when the supervisor is given one: else it is inherited). */
  public interface ErrorOutput {
    /** Reads {@code stderr} of {@code spawn} until it ends, on a thread of its own; returns at once. */
    void attach(Spawn spawn, InputStream stderr);
  }

  /** What the supervisor tells its owner. Calls are serialised, on the timer's thread. */
  public interface Listener {
    /** A process was started. */
    void spawned(Spawn spawn);

    /** A process ended (or could not be started: exit code -1). */
    void exited(Spawn spawn, int exitCode);
  }

  /**
   * One started process: its generation (1, 2, ...), the process (null when spawning failed) and
   * the pipe its standard input reads (null: the process's own {@link Process#getOutputStream()}).
   */
  public record Spawn(long generation, Process process, CallPipe input, long startedAtMs) {
    /** The process ID (as this host sees it), or 0. */
    public long pid() {
      return process == null ? 0 : process.pid();
    }

    /** Whether the process is running. */
    public boolean alive() {
      return process != null && process.isAlive();
    }
  }

  private final List<String> command;
  private final Map<String, String> environment;
  private final ScheduledExecutorService timer;
  private final RestartBackoff backoff;
  private final Listener listener;
  private final String name;
  private final ErrorOutput errorOutput;
  private volatile Spawn current;
  private long generation;
  private final AtomicInteger restarts = new AtomicInteger();
  private boolean started;
  private boolean closed;
  private ScheduledFuture<?> pendingRestart;
  private Spawn stopping;
  private String stopReason = "";

  /** A supervisor of {@code command} run with {@code environment}, named {@code name} in the log. */
  public EnvironmentSupervisor(List<String> command, Map<String, String> environment,
      ScheduledExecutorService timer, RestartBackoff backoff, Listener listener, String name) {
    this(command, environment, timer, backoff, listener, name, null);
  }

  /** The same, with each process's standard error handed to {@code errorOutput} (null: inherited). */
  public EnvironmentSupervisor(List<String> command, Map<String, String> environment,
      ScheduledExecutorService timer, RestartBackoff backoff, Listener listener, String name,
      ErrorOutput errorOutput) {
    this.errorOutput = errorOutput;
    this.command = List.copyOf(command);
    this.environment = Map.copyOf(environment);
    this.timer = timer;
    this.backoff = backoff;
    this.listener = listener;
    this.name = name;
  }

  /** Starts the first process (on the timer's thread). */
  public void start() {
    synchronized (this) {
      if (started || closed) {
        throw new IllegalStateException("the supervisor was already started");
      }
      started = true;
    }
    timer.execute(this::spawnIfOpen);
  }

  /** The current process (possibly exited), or null before the first start. */
  public Spawn current() {
    return current;
  }

  /** Restarts performed since start. */
  public int restarts() {
    return restarts.get();
  }

  /**
   * Stops {@code spawn}'s process (SIGTERM, SIGKILL after 2 s) for {@code reason}; its exit
   * triggers the restart, logged as asked for rather than as a failure.
   */
  public void terminate(Spawn spawn, String reason) {
    Process p = spawn.process();
    if (p == null || !p.isAlive()) {
      return;
    }
    synchronized (this) {
      stopping = spawn;
      stopReason = reason;
    }
    List<ProcessHandle> family = stop(p);
    timer.schedule(() -> kill(p, family), KILL_AFTER_MS, TimeUnit.MILLISECONDS);
  }

  /** Stops supervising and stops the process (SIGTERM, then SIGKILL after 2 s); returns once it is gone. */
  public void close() {
    Spawn last;
    synchronized (this) {
      closed = true;
      if (pendingRestart != null) {
        pendingRestart.cancel(false);
      }
      last = current;
    }
    if (last == null || last.process() == null) {
      return;
    }
    Process p = last.process();
    List<ProcessHandle> family = stop(p);
    try {
      p.waitFor(KILL_AFTER_MS, TimeUnit.MILLISECONDS);
      kill(p, family);
      p.waitFor(KILL_AFTER_MS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      kill(p, family);
      Thread.currentThread().interrupt();
    }
  }

  // SIGTERM to the process and what it started, listed first: once the process is gone its
  // children are no longer found through it.
  private static List<ProcessHandle> stop(Process p) {
    List<ProcessHandle> family = p.descendants().toList();
    p.destroy();
    family.forEach(ProcessHandle::destroy);
    return family;
  }

  // SIGKILL to whatever of them is still alive.
  private static void kill(Process p, List<ProcessHandle> family) {
    family.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
    p.destroyForcibly();
  }

  private synchronized void spawnIfOpen() {
    if (closed) {
      return;
    }
    generation++;
    ProcessBuilder builder = new ProcessBuilder(command).redirectError(
        errorOutput == null ? ProcessBuilder.Redirect.INHERIT : ProcessBuilder.Redirect.PIPE);
    Map<String, String> env = builder.environment();
    env.clear();
    env.putAll(environment);
    CallPipe input = CallPipe.open();
    if (input != null) {
      builder.redirectInput(input.processEnd());
    }
    Process process;
    try {
      process = builder.start();
    } catch (IOException e) {
      LOG.log(Level.WARNING, "could not start the execution environment " + name + " (" + command.get(0) + "): "
          + e.getMessage());
      if (input != null) {
        input.close();
      }
      Spawn failed = new Spawn(generation, null, null, System.currentTimeMillis());
      current = failed;
      timer.execute(() -> onExit(failed, -1));
      return;
    }
    if (input != null) {
      input.processStarted();
    }
    Spawn spawn = new Spawn(generation, process, input, System.currentTimeMillis());
    if (errorOutput != null) {
      errorOutput.attach(spawn, process.getErrorStream());
    }
    current = spawn;
    listener.spawned(spawn);
    process.onExit().thenRun(() -> timer.execute(() -> onExit(spawn, process.exitValue())));
  }

  private synchronized void onExit(Spawn spawn, int exitCode) {
    if (spawn.process() != null) {
      spawn.process().descendants().forEach(ProcessHandle::destroyForcibly);
    }
    listener.exited(spawn, exitCode);
    if (closed || spawn != current) {
      return;
    }
    long lived = System.currentTimeMillis() - spawn.startedAtMs();
    long delay = backoff.delayAfter(exitCode, lived);
    if (spawn == stopping) {
      LOG.info("the execution environment " + name + " (pid " + spawn.pid() + ") was stopped (" + stopReason
          + ") after " + lived + " ms; starting it again in " + delay + " ms");
    } else {
      LOG.log(Level.WARNING, "the execution environment " + name + " (pid " + spawn.pid() + ") exited with code "
          + exitCode + " after " + lived + " ms; restarting in " + delay + " ms");
    }
    pendingRestart = timer.schedule(this::restart, delay, TimeUnit.MILLISECONDS);
  }

  private synchronized void restart() {
    if (closed) {
      return;
    }
    restarts.incrementAndGet();
    spawnIfOpen();
  }
}
