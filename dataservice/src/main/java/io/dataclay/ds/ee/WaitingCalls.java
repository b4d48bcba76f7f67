package io.dataclay.ds.ee;

import io.dataclay.ds.service.ExecutionRequest;
import io.dataclay.exceptions.BackendUnavailableException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Calls waiting for a (re)starting execution environment, in arrival order: each one that is not
 * taken within {@code waitMs} fails with BACKEND_UNAVAILABLE. No thread waits per call.
 */
final class WaitingCalls {
  /** One waiting call. */
  record Call(ExecutionRequest request, CompletableFuture<byte[]> future) {}

  private final ScheduledExecutorService timer;
  private final long waitMs;
  private final Map<Call, ScheduledFuture<?>> waiting = new LinkedHashMap<>();

  /** Calls that wait up to {@code waitMs}, timed on {@code timer}. */
  WaitingCalls(ScheduledExecutorService timer, long waitMs) {
    this.timer = timer;
    this.waitMs = waitMs;
  }

  /** Adds a call; it fails by itself if nobody takes it within the wait. */
  synchronized void add(ExecutionRequest request, CompletableFuture<byte[]> future) {
    Call call = new Call(request, future);
    waiting.put(call, timer.schedule(() -> expire(call), waitMs, TimeUnit.MILLISECONDS));
  }

  /** Removes and returns every waiting call, oldest first. */
  synchronized List<Call> takeAll() {
    List<Call> taken = new ArrayList<>(waiting.keySet());
    waiting.values().forEach(timeout -> timeout.cancel(false));
    waiting.clear();
    return taken;
  }

  private void expire(Call call) {
    synchronized (this) {
      if (waiting.remove(call) == null) {
        return;
      }
    }
    call.future().completeExceptionally(new BackendUnavailableException(
        "the Python execution environment is not running (it did not come up within " + waitMs + " ms)"));
  }
}
