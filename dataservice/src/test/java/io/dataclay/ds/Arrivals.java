package io.dataclay.ds;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/** The test peers' one wait for what the Data Service sends or starts: up to 10 s, then the test fails. */
final class Arrivals {
  private static final long LIMIT_MS = 10_000;

  private Arrivals() {}

  /** The head of {@code queue} once it arrives; fails with "{@code nothing} within 10 s" when it does not. */
  static <T> T next(BlockingQueue<T> queue, String nothing) throws InterruptedException {
    T head = queue.poll(LIMIT_MS, TimeUnit.MILLISECONDS);
    if (head == null) {
      throw new AssertionError(nothing + " within 10 s");
    }
    return head;
  }
}
