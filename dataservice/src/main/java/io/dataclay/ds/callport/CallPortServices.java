package io.dataclay.ds.callport;

import io.dataclay.ds.execution.ExecutionService;
import io.dataclay.ds.servicer.CallExecutors;
import io.dataclay.server.metrics.RpcMetrics;

/**
 * What the call port serves calls with: where they run and the sessions they are checked against
 * (the same {@link CallExecutors} gRPC's calls are placed by), the execution service that runs
 * them, the RPC metrics its calls are counted in, and the largest frame it accepts.
 */
public record CallPortServices(CallExecutors calls, ExecutionService execution, RpcMetrics metrics,
    int maxFrameBytes) {}
