package io.dataclay.logic.service;

import io.dataclay.logic.backends.BackendRegistry;
import io.dataclay.logic.failover.Failover;
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
    gauge(registry, "dataclay_metadata_objects", "Objects the metadata registers, in every dataset.", objects);
    gauge(registry, "dataclay_metadata_aliases", "Aliases the metadata holds, in every dataset.", aliases);
    gauge(registry, "dataclay_sessions_open", "Sessions open (closed and expired ones not counted).", sessions);
    GaugeWithCallback.builder()
        .name("dataclay_backends")
        .help("Backends registered, by whether they heartbeated within DATACLAY_BACKEND_TIMEOUT_MS.")
        .labelNames("state")
        .callback(cb -> {
          long all = backends.records().size();
          long alive = backends.aliveIds().size();
          cb.call(alive, "alive");
          cb.call(all - alive, "silent");
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

  // a value read from the metadata database: while it cannot be read, the scrape goes on without it
  private static void gauge(PrometheusRegistry registry, String name, String help, LongSupplier value) {
    GaugeWithCallback.builder().name(name).help(help).callback(cb -> {
      long v;
      try {
        v = value.getAsLong();
      } catch (RuntimeException e) {
        return;
      }
      cb.call(v);
    }).register(registry);
  }
}
