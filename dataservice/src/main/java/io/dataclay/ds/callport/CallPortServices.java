package io.dataclay.ds.callport;

import io.dataclay.ds.execution.ExecutionService;
import io.dataclay.ds.models.ClassAvailability;
import io.dataclay.ds.session.SessionCache;
import io.dataclay.server.metrics.RpcMetrics;
import java.util.concurrent.Executor;

/**
 * What the call port serves calls with: the sessions it checks them against, the execution service
 * that runs them, the pool for calls that may block (the same choice gRPC calls get: inline on the
 * event loop only when the session is cached, the store never waits and the models are installed),
 * the RPC metrics its calls are counted in, and the largest frame it accepts.
 */
public record CallPortServices(SessionCache sessions, ExecutionService execution, Executor pool,
    boolean storeNeverWaits, ClassAvailability models, RpcMetrics metrics, int maxFrameBytes) {}
