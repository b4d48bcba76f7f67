package io.dataclay.ds.ee;

import io.dataclay.ds.execution.ResultApplier;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * What every environment link of a Data Service uses: the applier that stores results, the
 * services answering loads and relays, the pool for work that may block and the timer.
 */
public record LinkServices(ResultApplier applier, StateLoads loads, CallRelay relay, Executor blocking,
    ScheduledExecutorService timer) {
  private static final Logger LOG = Logger.getLogger(LinkServices.class.getName());

  /** Computes {@code work} on the pool and hands its value to {@code then} there; dropped when shutting down. */
  <T> void run(Supplier<T> work, Consumer<T> then) {
    try {
      blocking.execute(() -> {
        T value;
        try {
          value = work.get();
        } catch (RuntimeException e) {
          LOG.log(Level.WARNING, "answering an execution environment failed", e);
          return;
        }
        then.accept(value);
      });
    } catch (RejectedExecutionException shuttingDown) {
      LOG.fine("dropped an execution environment request: the Data Service is shutting down");
    }
  }
}
