package io.dataclay.ds.store.engine;

import io.dataclay.exceptions.InternalException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * Lets a store close only when no call is inside it. A pmem engine unmaps its pool on close, and
 * a call still reading the mapping then would crash the whole JVM, not just fail; so every call
 * that touches the pool runs between {@link #enter()} and {@link #exit()}, and {@link #close()}
 * waits for those in flight. Entering costs one uncontended striped counter update.
 */
public final class CloseGuard {
  private final String what;
  private final LongAdder inside = new LongAdder();
  private volatile boolean closed;

  /** A guard for the store described by {@code what} (used in the "closed" error). */
  public CloseGuard(String what) {
    this.what = what;
  }

  /**
   * Admits a call; pair with {@link #exit()} in a finally block.
   *
   * @throws InternalException when the store is closed
   */
  public void enter() {
    inside.increment();
    // Counted before the check: close() sets the flag before it sums, so either this call sees
    // the flag or close() sees this call.
    if (closed) {
      inside.decrement();
      throw new InternalException(what + " is closed");
    }
  }

  /** Lets an admitted call leave. */
  public void exit() {
    inside.decrement();
  }

  /**
   * Runs {@code call} admitted (between {@link #enter()} and {@link #exit()}) and answers its value.
   *
   * @throws InternalException when the store is closed
   */
  public <T> T call(Supplier<T> call) {
    enter();
    try {
      return call.get();
    } finally {
      exit();
    }
  }

  /**
   * Runs {@code call} admitted (between {@link #enter()} and {@link #exit()}).
   *
   * @throws InternalException when the store is closed
   */
  public void run(Runnable call) {
    enter();
    try {
      call.run();
    } finally {
      exit();
    }
  }

  /** Fails when the store is closed; for calls that touch only DRAM state. */
  public void checkOpen() {
    if (closed) {
      throw new InternalException(what + " is closed");
    }
  }

  /** Refuses new calls and waits for those inside; returns false when it was already closed. */
  public synchronized boolean close() {
    if (closed) {
      return false;
    }
    closed = true;
    while (inside.sum() != 0) {
      Thread.onSpinWait();
      Thread.yield();
    }
    return true;
  }
}
