package io.dataclay.ds.status;

import io.dataclay.ds.environments.EnvironmentStatus;
import io.dataclay.ds.store.StoreStats;
import io.dataclay.server.metrics.RpcMetrics;
import java.util.List;
import java.util.Map;

/**
 * What GetStatus answers: identity, store use, environments, per RPC its calls started and their
 * durations, and the milliseconds the JIT has compiled for since start (0: not measured).
 */
public record BackendReport(BackendIdentity backend, StoreStats store, List<EnvironmentStatus> environments,
    Map<String, Long> calls, Map<String, RpcMetrics.Latency> latency, long jitCompileMs) {}
