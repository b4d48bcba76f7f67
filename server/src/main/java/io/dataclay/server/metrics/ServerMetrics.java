package io.dataclay.server.metrics;

import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * One server process's metrics: its own Prometheus registry (never the library's global one, so
 * servers started side by side in one JVM, as tests do, keep theirs apart), the per-RPC metrics
 * counted by {@link RpcMetrics}, the JVM's own (memory, GC, threads), and whatever gauges the
 * server registers. Collected only when scraped, by a {@link MetricsEndpoint}.
 */
public final class ServerMetrics {
  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final RpcMetrics rpc = new RpcMetrics(registry);

  /** A registry with the RPC and JVM metrics. */
  public ServerMetrics() {
    JvmMetrics.builder().register(registry);
  }

  /** The registry the server's own gauges go in. */
  public PrometheusRegistry registry() {
    return registry;
  }

  /** The per-RPC metrics and their interceptor. */
  public RpcMetrics rpc() {
    return rpc;
  }
}
