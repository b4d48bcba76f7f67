package io.dataclay.ds.status;

import io.dataclay.ds.environments.EnvironmentStatus;
import io.dataclay.ds.store.EngineFigure;
import io.dataclay.server.metrics.CachedReading;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * A backend's own gauges and counters, read from the same report GetStatus answers and from the
 * store engine's own figures (2lm's cache), when scraped.
 * Labels are bounded: the engine (one per backend) and the environment's language; no account,
 * object or model appears.
 */
public final class BackendMetrics {
  private BackendMetrics() {}

  /** Registers this backend's metrics in {@code registry}, reading {@code report} at each scrape. */
  public static void register(PrometheusRegistry registry, Supplier<BackendReport> source,
      Supplier<List<EngineFigure>> figureSource) {
    // one report and one set of figures per scrape (and at most ten a second), read safely: a
    // failing read leaves its metrics out of that scrape, never fails it
    CachedReading<BackendReport> report = new CachedReading<>(source, 100);
    CachedReading<List<EngineFigure>> figures = new CachedReading<>(figureSource, 100);
    for (EngineFigure first : figureSource.get()) {
      String name = first.name();
      if (first.counter()) {
        CounterWithCallback.builder().name(name).help(first.help())
            .callback(cb -> valueOf(figures, name).ifPresent(cb::call)).register(registry);
      } else {
        GaugeWithCallback.builder().name(name).help(first.help())
            .callback(cb -> valueOf(figures, name).ifPresent(cb::call)).register(registry);
      }
    }
    GaugeWithCallback.builder()
        .name("dataclay_store_objects")
        .help("Objects stored on this backend (masters, replicas and versions).")
        .labelNames("engine")
        .callback(cb -> report.get().map(BackendReport::store).ifPresent(s -> cb.call(s.objects(), s.engine())))
        .register(registry);
    GaugeWithCallback.builder()
        .name("dataclay_store_used_bytes")
        .unit(Unit.BYTES)
        .help("Bytes of the store's pool (or database) in use.")
        .labelNames("engine")
        .callback(cb -> report.get().map(BackendReport::store).ifPresent(s -> cb.call(s.usedBytes(), s.engine())))
        .register(registry);
    GaugeWithCallback.builder()
        .name("dataclay_store_capacity_bytes")
        .unit(Unit.BYTES)
        .help("Size of the store's pool; 0 when the engine has no fixed size (memory, postgres).")
        .labelNames("engine")
        .callback(cb -> report.get().map(BackendReport::store).ifPresent(s -> cb.call(s.capacityBytes(), s.engine())))
        .register(registry);
    GaugeWithCallback.builder()
        .name("dataclay_environment_processes")
        .help("Execution-environment processes alive (one per account served and language).")
        .labelNames("language")
        .callback(cb -> {
          for (EnvironmentStatus e : environments(report)) {
            cb.call(e.processes().stream().filter(EnvironmentStatus.Process::alive).count(), language(e));
          }
        })
        .register(registry);
    GaugeWithCallback.builder()
        .name("dataclay_environment_calls_in_flight")
        .help("Calls sent to execution environments and not answered yet.")
        .labelNames("language")
        .callback(cb -> {
          for (EnvironmentStatus e : environments(report)) {
            cb.call(e.processes().stream().mapToInt(EnvironmentStatus.Process::inFlight).sum(), language(e));
          }
        })
        .register(registry);
    CounterWithCallback.builder()
        .name("dataclay_environment_calls")
        .help("Calls sent to execution environments since this backend started.")
        .labelNames("language")
        .callback(cb -> {
          for (EnvironmentStatus e : environments(report)) {
            cb.call(e.calls(), language(e));
          }
        })
        .register(registry);
    CounterWithCallback.builder()
        .name("dataclay_environment_restarts")
        .help("Execution-environment processes restarted since this backend started (crashed, killed, or over budget).")
        .labelNames("language")
        .callback(cb -> {
          for (EnvironmentStatus e : environments(report)) {
            cb.call(e.restarts(), language(e));
          }
        })
        .register(registry);
  }

  private static java.util.OptionalDouble valueOf(CachedReading<List<EngineFigure>> figures, String name) {
    return figures.get().orElse(List.of()).stream().filter(f -> f.name().equals(name))
        .mapToDouble(EngineFigure::value).findFirst();
  }

  // the environments of this scrape's report; none when it could not be read
  private static List<EnvironmentStatus> environments(CachedReading<BackendReport> report) {
    return report.get().map(BackendReport::environments).orElse(List.of());
  }

  private static String language(EnvironmentStatus e) {
    return e.language().name().toLowerCase(Locale.ROOT);
  }
}
