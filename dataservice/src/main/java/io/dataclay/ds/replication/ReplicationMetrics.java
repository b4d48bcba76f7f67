package io.dataclay.ds.replication;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;

/** A backend's replication and failover metrics, read from its replica sets and mastership when scraped. */
public final class ReplicationMetrics {
  private ReplicationMetrics() {}

  /** Registers them in {@code registry}. */
  public static void register(PrometheusRegistry registry, ReplicaSets replicas, Mastership mastership) {
    GaugeWithCallback.builder()
        .name("dataclay_replication_acknowledgements_awaited")
        .help("Batches of changes sent to replica backends and not taken yet: a change's call answers once"
            + " every replica took it.")
        .callback(cb -> cb.call(replicas.acknowledgementsAwaited()))
        .register(registry);
    CounterWithCallback.builder()
        .name("dataclay_replication_batches_sent")
        .help("Batches of changes sent to replica backends since start.")
        .callback(cb -> cb.call(replicas.batchesSent()))
        .register(registry);
    CounterWithCallback.builder()
        .name("dataclay_replication_send_seconds")
        .unit(Unit.SECONDS)
        .help("Time those batches took from being queued to being taken (or failing), summed: over batches_sent,"
            + " the replicas' mean lag.")
        .callback(cb -> cb.call(replicas.sendSeconds()))
        .register(registry);
    CounterWithCallback.builder()
        .name("dataclay_replication_replicas_dropped")
        .help("Object replicas dropped since start because their backend did not take a change.")
        .callback(cb -> cb.call(replicas.replicasDropped()))
        .register(registry);
    CounterWithCallback.builder()
        .name("dataclay_failover_fenced_refusals")
        .help("Changes and copies refused since start because their sender's term was stale: its master copies"
            + " were promoted away while it was cut off.")
        .callback(cb -> cb.call(mastership.fencedRefusals()))
        .register(registry);
    CounterWithCallback.builder()
        .name("dataclay_failover_lease_refusals")
        .help("Requests on replicated objects this backend refused since start because its master lease had run out.")
        .callback(cb -> cb.call(mastership.leaseRefusals()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("dataclay_failover_term")
        .help("This backend's failover term, as the Logic Module last said: it rises each time replicas of its"
            + " objects are promoted away from it.")
        .callback(cb -> cb.call(mastership.ownTerm()))
        .register(registry);
  }
}
