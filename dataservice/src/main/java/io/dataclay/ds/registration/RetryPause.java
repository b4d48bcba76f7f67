package io.dataclay.ds.registration;

import java.util.concurrent.TimeUnit;

/** The wait between two tries of a registration with the Logic Module. */
final class RetryPause {
  private RetryPause() {}

  /** Waits {@code ms}; false when interrupted (the interrupt stays set, so the caller stops retrying). */
  static boolean pause(long ms) {
    try {
      TimeUnit.MILLISECONDS.sleep(ms);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
