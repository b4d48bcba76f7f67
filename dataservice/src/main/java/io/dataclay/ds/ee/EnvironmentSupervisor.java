package io.dataclay.ds.ee;

import java.io.IOException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Keeps one execution-environment process running: spawns it with a fresh secret each time (the
 * first line of its standard input, never its environment or command line), restarts it with
 * {@link RestartBackoff} when it exits, counts restarts, and stops it on close (SIGTERM, then
 * SIGKILL after 2 s). Its stdout and stderr are the Data Service's; it gets only the environment
 * it is given.
 */
public final class EnvironmentSupervisor {
  private static final long KILL_AFTER_MS = 2000;
  private static final Logger LOG = Logger.getLogger(EnvironmentSupervisor.class.getName());
  private static final SecureRandom RANDOM = new SecureRandom();

  /** What the supervisor tells its owner. Calls are serialised. */
  public interface Listener {
    /** A process was started with {@code spawn.secret()}. */
    void spawned(Spawn spawn);

    /** A process ended (or could not be started: exit code -1). */
    void exited(Spawn spawn, int exitCode);
  }

  /** One started process: its generation (1, 2, ...), secret, and the process (null when spawning failed). */
  public record Spawn(long generation, String secret, Process process, long startedAtMs) {
    /** The process ID, or 0. */
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
  private volatile Spawn current;
  private long generation;
  private final AtomicInteger restarts = new AtomicInteger();
  private boolean closed;
  private ScheduledFuture<?> pendingRestart;

  /** A supervisor of {@code command} run with {@code environment} (plus the secret). */
  public EnvironmentSupervisor(List<String> command, Map<String, String> environment,
      ScheduledExecutorService timer, RestartBackoff backoff, Listener listener) {
    this.command = List.copyOf(command);
    this.environment = Map.copyOf(environment);
    this.timer = timer;
    this.backoff = backoff;
    this.listener = listener;
  }

  /** Starts the first process. */
  public synchronized void start() {
    if (current != null || closed) {
      throw new IllegalStateException("the supervisor was already started");
    }
    spawn();
  }

  /** The current process (possibly exited), or null before the first start. */
  public Spawn current() {
    return current;
  }

  /** Restarts performed since start. */
  public int restarts() {
    return restarts.get();
  }

  /** Asks {@code spawn}'s process to stop (SIGTERM, SIGKILL after 2 s); its exit triggers the restart. */
  public void terminate(Spawn spawn) {
    Process p = spawn.process();
    if (p == null || !p.isAlive()) {
      return;
    }
    p.destroy();
    timer.schedule(() -> {
      if (p.isAlive()) {
        p.destroyForcibly();
      }
    }, KILL_AFTER_MS, TimeUnit.MILLISECONDS);
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
    p.destroy();
    try {
      if (!p.waitFor(KILL_AFTER_MS, TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        p.waitFor(KILL_AFTER_MS, TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  private void spawn() {
    generation++;
    String secret = newSecret();
    ProcessBuilder builder = new ProcessBuilder(command).inheritIO().redirectInput(ProcessBuilder.Redirect.PIPE);
    Map<String, String> env = builder.environment();
    env.clear();
    env.putAll(environment);
    Process process;
    try {
      process = builder.start();
      try (var stdin = process.getOutputStream()) {
        stdin.write((secret + "\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      }
    } catch (IOException e) {
      LOG.log(Level.WARNING, "could not start the execution environment " + command + ": " + e.getMessage());
      Spawn failed = new Spawn(generation, secret, null, System.currentTimeMillis());
      current = failed;
      timer.execute(() -> onExit(failed, -1));
      return;
    }
    Spawn spawn = new Spawn(generation, secret, process, System.currentTimeMillis());
    current = spawn;
    listener.spawned(spawn);
    process.onExit().thenRun(() -> timer.execute(() -> onExit(spawn, process.exitValue())));
  }

  private synchronized void onExit(Spawn spawn, int exitCode) {
    listener.exited(spawn, exitCode);
    if (closed || spawn != current) {
      return;
    }
    long lived = System.currentTimeMillis() - spawn.startedAtMs();
    long delay = backoff.delayAfter(exitCode, lived);
    LOG.log(Level.WARNING, "the execution environment (pid " + spawn.pid() + ") exited with code " + exitCode
        + " after " + lived + " ms; restarting in " + delay + " ms");
    pendingRestart = timer.schedule(this::restart, delay, TimeUnit.MILLISECONDS);
  }

  private synchronized void restart() {
    if (closed) {
      return;
    }
    restarts.incrementAndGet();
    spawn();
  }

  private static String newSecret() {
    byte[] raw = new byte[32];
    RANDOM.nextBytes(raw);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
  }
}
