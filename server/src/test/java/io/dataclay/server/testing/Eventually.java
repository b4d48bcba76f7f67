package io.dataclay.server.testing;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The one way Java tests wait for something another thread or process does: poll a condition
 * until it holds or a deadline passes. Shared with the servers' tests through this module's test-jar.
 */
public final class Eventually {
  private static final long POLL_MS = 20;

  /** A condition polled by {@link Eventually}; it may throw (a probe that reads a file). */
  @FunctionalInterface
  public interface Condition {
    /** Whether what is awaited has happened. */
    boolean holds() throws Exception;
  }

  /** A value polled by {@link Eventually}: empty until it is there. */
  @FunctionalInterface
  public interface Probe<T> {
    /** The value, once it is there. */
    Optional<T> get() throws Exception;
  }

  private Eventually() {}

  /**
   * Waits until {@code condition} holds, failing the test when it still does not after
   * {@code limit}; {@code what} says what was awaited ("the idle process stopped").
   */
  public static void await(Duration limit, Condition condition, String what) throws InterruptedException {
    await(limit, () -> condition.holds() ? Optional.of(Boolean.TRUE) : Optional.empty(), () -> what);
  }

  /**
   * Waits until {@code probe} has a value and returns it, failing the test when it has none after
   * {@code limit}; {@code what} says what was awaited, asked only on failure (so it can show the state then).
   */
  public static <T> T await(Duration limit, Probe<T> probe, Supplier<String> what) throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    while (true) {
      Optional<T> value = poll(probe, what);
      if (value.isPresent()) {
        return value.get();
      }
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("waited " + limit.toMillis() + " ms in vain for " + what.get());
      }
      Thread.sleep(POLL_MS);
    }
  }

  /**
   * Waits until {@code condition} holds or {@code limit} passes, without failing: whether it held.
   * For waits that only let things settle; a test asserts on what it awaits with {@link #await}.
   */
  public static boolean within(Duration limit, Condition condition) throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    while (true) {
      if (poll(() -> condition.holds() ? Optional.of(Boolean.TRUE) : Optional.empty(), () -> "a condition")
          .isPresent()) {
        return true;
      }
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      Thread.sleep(POLL_MS);
    }
  }

  private static <T> Optional<T> poll(Probe<T> probe, Supplier<String> what) throws InterruptedException {
    try {
      return probe.get();
    } catch (RuntimeException | Error | InterruptedException e) {
      throw e;
    } catch (Exception e) {
      throw new AssertionError("could not check for " + what.get() + ": " + e, e);
    }
  }
}
