package io.dataclay.ds.snapshot;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The write gate a snapshot's freeze closes: it waits for writes inside, holds new ones, and any thread opens it. */
@Timeout(30)
class WriteGateTest {
  private final WriteGate gate = new WriteGate();
  // not the common pool: on two cores it has one thread, and these tests block threads on purpose
  private final java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newCachedThreadPool();

  @org.junit.jupiter.api.AfterEach
  void stopThreads() {
    pool.shutdownNow();
  }

  @Test
  void closingWaitsForTheWritesInsideAndHoldsNewOnesUntilAnotherThreadOpensIt() throws Exception {
    // setup: a write inside the gate
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Void> first = writeInsideUntil(release);
    // run: close while it is inside
    CompletableFuture<Boolean> closed = CompletableFuture.supplyAsync(() -> close(5000), pool);
    // verify: close waits for it
    assertThrows(TimeoutException.class, () -> closed.get(200, TimeUnit.MILLISECONDS));
    release.countDown();
    assertTrue(closed.get(5, TimeUnit.SECONDS));
    first.get(5, TimeUnit.SECONDS);
    // run: a new write arrives while closed
    CompletableFuture<Void> second = write();
    // verify: it waits until another thread opens the gate
    assertThrows(TimeoutException.class, () -> second.get(300, TimeUnit.MILLISECONDS));
    CompletableFuture.runAsync(gate::open, pool).get(5, TimeUnit.SECONDS);
    second.get(5, TimeUnit.SECONDS);
    assertFalse(gate.isClosed());
  }

  @Test
  void aWriteThatDoesNotLeaveInTimeMakesTheCloseFailAndTheGateOpenAgain() throws Exception {
    // setup: a write that stays inside
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Void> stuck = writeInsideUntil(release);
    // run
    boolean closed = close(100);
    // verify: no cut, and other writes go on at once
    assertFalse(closed);
    assertFalse(gate.isClosed());
    write().get(2, TimeUnit.SECONDS);
    release.countDown();
    stuck.get(5, TimeUnit.SECONDS);
  }

  @Test
  void manyWritersNeverSlipPastAClosedGate() throws Exception {
    // setup: writers counting themselves inside a shared counter
    java.util.concurrent.atomic.AtomicInteger insideNow = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
    java.util.List<CompletableFuture<Void>> writers = new java.util.ArrayList<>();
    for (int i = 0; i < 4; i++) {
      writers.add(CompletableFuture.runAsync(() -> {
        while (!stop.get()) {
          gate.enter();
          insideNow.incrementAndGet();
          insideNow.decrementAndGet();
          gate.exit();
        }
      }, pool));
    }
    try {
      for (int round = 0; round < 200; round++) {
        // run
        assertTrue(close(5000));
        // verify: while closed, nobody is inside and nobody gets in
        for (int look = 0; look < 20; look++) {
          assertTrue(insideNow.get() == 0, "a write was inside a closed gate");
        }
        gate.open();
      }
    } finally {
      stop.set(true);
      gate.open();
      for (CompletableFuture<Void> w : writers) {
        w.get(5, TimeUnit.SECONDS);
      }
    }
  }

  /** A write on a thread of the pool: in through the gate and out again. */
  private CompletableFuture<Void> write() {
    return CompletableFuture.runAsync(() -> {
      gate.enter();
      gate.exit();
    }, pool);
  }

  /** A write that enters the gate and stays inside until {@code release}; returns once it is inside. */
  private CompletableFuture<Void> writeInsideUntil(CountDownLatch release) throws InterruptedException {
    CountDownLatch inside = new CountDownLatch(1);
    CompletableFuture<Void> write = CompletableFuture.runAsync(() -> {
      gate.enter();
      inside.countDown();
      await(release);
      gate.exit();
    }, pool);
    assertTrue(inside.await(5, TimeUnit.SECONDS));
    return write;
  }

  private boolean close(long ms) {
    try {
      return gate.close(ms);
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
