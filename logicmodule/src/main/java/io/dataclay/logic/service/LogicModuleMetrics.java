package io.dataclay.logic.service;

import io.dataclay.logic.backends.BackendRegistry;
import io.dataclay.logic.backends.RegisteredBackend;
import io.dataclay.logic.failover.Failover;
import io.dataclay.server.metrics.CachedReading;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.function.LongSupplier;

/**
 * The Logic Module's own gauges, read when scraped: the metadata's totals, the sessions open, the
 * backends alive or silent, failover's promotions, and what garbage collection removed. No label names an account, an
 * object or a backend: those lists grow without bound.
 */
final class LogicModuleMetrics {
  private LogicModuleMetrics() {}

  static void register(PrometheusRegistry registry, LongSupplier objects, LongSupplier aliases, LongSupplier sessions,
      LongSupplier collected, BackendRegistry backends, Failover failover) {
    // counted in the metadata database (a scan of a table): at most once per 10 s, however often
    // anyone scrapes, so that scrapes cannot keep the database's one connection (SQLite) busy
    CachedReading<long[]> totals = new CachedReading<>(
        () -> new long[] {objects.getAsLong(), aliases.getAsLong(), sessions.getAsLong()}, 10_000);
    GaugeWithCallback.builder().name("dataclay_metadata_objects")
        .help("Objects the metadata registers, in every dataset (counted at most every 10 s).")
        .callback(cb -> totals.get().ifPresent(t -> cb.call(t[0]))).register(registry);
    GaugeWithCallback.builder().name("dataclay_metadata_aliases")
        .help("Aliases the metadata holds, in every dataset (counted at most every 10 s).")
        .callback(cb -> totals.get().ifPresent(t -> cb.call(t[1]))).register(registry);
    GaugeWithCallback.builder().name("dataclay_sessions_open")
        .help("Sessions open, closed and expired ones not counted (counted at most every 10 s).")
        .callback(cb -> totals.get().ifPresent(t -> cb.call(t[2]))).register(registry);
    GaugeWithCallback.builder()
        .name("dataclay_backends")
        .help("Backends registered, by whether they heartbeated within DATACLAY_BACKEND_TIMEOUT_MS.")
        .labelNames("state")
        .callback(cb -> {
          java.util.List<RegisteredBackend> all = backends.all(); // one view: alive + silent = registered
          long alive = all.stream().filter(RegisteredBackend::alive).count();
          cb.call(alive, "alive");
          cb.call(all.size() - alive, "silent");
        })
        .register(registry);
    CounterWithCallback.builder()
        .name("dataclay_failover_promoted_objects")
        .help("Objects whose replica was promoted to master because their master's backend went silent.")
        .callback(cb -> cb.call(failover.promotedObjects()))
        .register(registry);
    CounterWithCallback.builder()
        .name("dataclay_failover_restored_replicas")
        .help("Replicas given back to a backend that rejoined after its objects were promoted away.")
        .callback(cb -> cb.call(failover.restoredReplicas()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("dataclay_failover_highest_term")
        .help("The highest failover term of any backend; it rises with each promotion away from a backend.")
        .callback(cb -> cb.call(failover.highestTerm()))
        .register(registry);
    CounterWithCallback.builder()
        .name("dataclay_gc_objects_collected")
        .help("Objects garbage collection removed since the Logic Module started.")
        .callback(cb -> cb.call(collected.getAsLong()))
        .register(registry);
  }
}
