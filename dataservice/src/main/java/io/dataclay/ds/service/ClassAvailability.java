package io.dataclay.ds.service;

import io.dataclay.common.Language;
import io.dataclay.exceptions.BackendUnavailableException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Whether a class can be used on this backend. Until the models registered when the backend
 * started are installed, callers wait for them (up to a deadline) rather than being refused; once
 * they are, a class this backend does not know makes it fetch the registered models again (a
 * deployment it missed while unreachable) before the class is refused.
 */
public final class ClassAvailability {
  // a client repeating unknown class names costs the Logic Module at most one ListModels per gap
  private static final long MIN_REFRESH_GAP_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  private final ModelRegistry registry;
  private final long waitMs;
  private final CountDownLatch installed = new CountDownLatch(1);
  private final Object refreshing = new Object();
  private volatile Runnable refresh = () -> {};
  private long lastRefreshStart = System.nanoTime() - MIN_REFRESH_GAP_NANOS; // guarded by refreshing

  /** Availability over {@code registry}; callers wait up to {@code waitMs} for the start-up install. */
  public ClassAvailability(ModelRegistry registry, long waitMs) {
    this.registry = registry;
    this.waitMs = waitMs;
  }

  /** Sets how to fetch and install every registered model (called on a miss, never concurrently). */
  public void refreshWith(Runnable fetchAndInstall) {
    this.refresh = fetchAndInstall;
  }

  /** The models registered when this backend started are installed: calls stop waiting. */
  public void markInstalled() {
    installed.countDown();
  }

  /** Whether the start-up install is done (a call may then run without waiting for it). */
  public boolean ready() {
    return installed.getCount() == 0;
  }

  /**
   * Returns once the start-up install is done.
   *
   * @throws BackendUnavailableException when it is not done within the wait
   */
  public void awaitReady() {
    if (ready()) {
      return;
    }
    try {
      if (installed.await(waitMs, TimeUnit.MILLISECONDS)) {
        return;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    throw new BackendUnavailableException("this backend is still installing the registered models (waited "
        + waitMs + " ms); retry the call");
  }

  /** Whether the class is usable now, without waiting or fetching (false: ask {@link #isAvailable}). */
  public boolean isKnownNow(Language language, String className) {
    return ready() && registry.isRegistered(language, className);
  }

  /**
   * Whether {@code className} belongs to a model installed here: waits for the start-up install,
   * and fetches the registered models once when the class is not known yet. May block on the
   * Logic Module: never call it on a network thread with a class {@link #isKnownNow} denies.
   *
   * @throws BackendUnavailableException when the start-up install is not done within the wait
   */
  public boolean isAvailable(Language language, String className) {
    awaitReady();
    if (registry.isRegistered(language, className)) {
      return true;
    }
    refreshAfter(System.nanoTime());
    return registry.isRegistered(language, className);
  }

  /** Runs a refresh that starts after {@code missedAt}, unless one already did. */
  private void refreshAfter(long missedAt) {
    synchronized (refreshing) {
      if (lastRefreshStart - missedAt >= 0) {
        return; // a refresh that started after the miss has finished while this thread waited
      }
      long gap = lastRefreshStart + MIN_REFRESH_GAP_NANOS - System.nanoTime();
      if (gap > 0) {
        try {
          TimeUnit.NANOSECONDS.sleep(gap);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      lastRefreshStart = System.nanoTime();
      refresh.run();
    }
  }
}
