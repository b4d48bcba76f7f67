package io.dataclay.ds.ee;

/**
 * Delays between restarts of a failing execution environment: 0.1 s doubling up to 5 s, back to
 * 0.1 s once a process has run 30 s. A process that asks to be restarted (exit code 3, after a
 * model it had imported changed) is restarted at once, unless it asked within a second of its
 * own start, which would otherwise spin.
 */
public final class RestartBackoff {
  /** Exit code with which an environment asks to be restarted at once. */
  public static final int RESTART_NOW_EXIT_CODE = 3;

  private final long initialMs;
  private final long maxMs;
  private final long healthyMs;
  private long nextMs;

  /** The standard policy: 100 ms doubling to 5 s, reset after 30 s of health. */
  public RestartBackoff() {
    this(100, 5000, 30_000);
  }

  /** A policy with explicit bounds (milliseconds). */
  public RestartBackoff(long initialMs, long maxMs, long healthyMs) {
    this.initialMs = initialMs;
    this.maxMs = maxMs;
    this.healthyMs = healthyMs;
    this.nextMs = initialMs;
  }

  /** The delay before restarting a process that exited with {@code exitCode} after living {@code livedMs}. */
  public synchronized long delayAfter(int exitCode, long livedMs) {
    if (livedMs >= healthyMs) {
      nextMs = initialMs;
    }
    if (exitCode == RESTART_NOW_EXIT_CODE && livedMs >= 1000) {
      return 0;
    }
    long delay = nextMs;
    nextMs = Math.min(nextMs * 2, maxMs);
    return delay;
  }
}
