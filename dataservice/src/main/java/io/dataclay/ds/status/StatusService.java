package io.dataclay.ds.status;

import io.dataclay.ds.environments.Environments;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.server.metrics.RpcMetrics;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/** Reports this backend's identity, store use, environments, and per RPC its calls started and their durations. */
public final class StatusService {
  private final ObjectStore store;
  private final Environments environments;
  private final Supplier<Map<String, Long>> calls;
  private final Supplier<Map<String, RpcMetrics.Latency>> latency;
  private volatile BackendIdentity identity;

  /**
   * A status over the given parts ({@code calls}: RPC name -> calls started; {@code latency}: RPC
   * name -> its ended calls' durations); the identity is set once the server is bound.
   */
  public StatusService(ObjectStore store, Environments environments, Supplier<Map<String, Long>> calls,
      Supplier<Map<String, RpcMetrics.Latency>> latency, BackendIdentity identity) {
    this.store = store;
    this.environments = environments;
    this.calls = calls;
    this.latency = latency;
    this.identity = Objects.requireNonNull(identity, "identity");
  }

  /** Replaces the identity (the bound port is known after start). */
  public void identify(BackendIdentity identity) {
    this.identity = Objects.requireNonNull(identity, "identity");
  }

  /** This backend's identity. */
  public BackendIdentity identity() {
    return identity;
  }

  /** A snapshot of the backend's state. */
  public BackendReport report() {
    return new BackendReport(identity, store.stats(), environments.statuses(), calls.get(), latency.get(),
        jitCompileMs());
  }

  /** The JIT compilers' total time since start, in milliseconds; 0 when this JVM does not measure it. */
  static long jitCompileMs() {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
  }
}
