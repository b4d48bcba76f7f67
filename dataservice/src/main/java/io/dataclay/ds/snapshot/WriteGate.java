package io.dataclay.ds.snapshot;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The gate every store write passes (docs/internals.md "Snapshots"): open, writes only count
 * themselves in and out (two atomic operations); closed, new writes wait and {@link #close}
 * returns once the writes already inside have left. Unlike a read-write lock, any thread may open
 * it again: a snapshot's freeze is opened by the Logic Module's thaw call or by a timer.
 */
final class WriteGate {
  private final AtomicInteger inside = new AtomicInteger();
  private final Object monitor = new Object();
  // written under the monitor, read without it on the fast path
  private volatile boolean closed;

  /** Waits while the gate is closed, then counts the caller in; pair with {@link #exit()}. */
  void enter() {
    while (true) {
      if (!closed) {
        inside.incrementAndGet();
        // Both sides write then read a volatile (Dekker): either close() sees this writer inside,
        // or this writer sees the gate closed and backs out.
        if (!closed) {
          return;
        }
        exit();
      }
      awaitOpen();
    }
  }

  /** Counts the caller out. */
  void exit() {
    if (inside.decrementAndGet() == 0 && closed) {
      synchronized (monitor) {
        monitor.notifyAll();
      }
    }
  }

  /**
   * Closes the gate and waits up to {@code timeoutMs} for the writes inside to leave. Returns true
   * with the gate closed and nobody inside; false (the gate open again) when they did not leave in time.
   */
  boolean close(long timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    synchronized (monitor) {
      closed = true;
      while (inside.get() != 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          open();
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(monitor, left);
      }
      return true;
    }
  }

  /** Opens the gate; waiting writes go on. Opening an open gate does nothing. */
  void open() {
    synchronized (monitor) {
      closed = false;
      monitor.notifyAll();
    }
  }

  /** Whether the gate is closed (or closing). */
  boolean isClosed() {
    return closed;
  }

  private void awaitOpen() {
    boolean interrupted = false;
    synchronized (monitor) {
      while (closed) {
        try {
          // a freeze always ends (thaw call or its timer); the timeout only re-checks
          monitor.wait(100);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    }
    if (interrupted) {
      // a write already under way is not abandoned half-way: finish it, keep the interrupt
      Thread.currentThread().interrupt();
    }
  }
}
