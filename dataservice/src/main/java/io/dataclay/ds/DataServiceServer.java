package io.dataclay.ds;

import io.dataclay.rpc.TlsSettings;
import io.dataclay.server.GrpcServer;
import io.dataclay.server.metrics.RpcMetrics;
import io.dataclay.server.ServerTransport;
import io.grpc.BindableService;
import io.grpc.ServerBuilder;
import io.grpc.ServerCallExecutorSupplier;
import java.time.Duration;

/**
 * Builds the Data Service's gRPC server: the DataService service on a {@link GrpcServer}, which
 * starts, stops (letting calls in flight finish for up to 2 s) and blocks until shutdown; each call
 * run where {@code perCall} says (a pool, or inline on the transport thread for calls that cannot
 * block).
 */
public final class DataServiceServer {
  private static final Duration GRACE = Duration.ofSeconds(2);

  private DataServiceServer() {}

  /**
   * A server built from {@code builder} (a port or an in-process name chosen by the caller) that
   * counts and times each call in {@code metrics}. Only finding the method and asking
   * {@code perCall} run on the transport thread; {@code perCall} must answer an executor (never
   * null) for every call.
   */
  public static GrpcServer serving(ServerBuilder<?> builder, BindableService dataService, RpcMetrics metrics,
      ServerCallExecutorSupplier perCall, int maxMessageBytes) {
    return GrpcServer.serving(builder.directExecutor().callExecutor(perCall), dataService, metrics,
        maxMessageBytes, GRACE);
  }

  /**
   * A builder listening on {@code bindHost:port} only (port 0: any free port), secured as {@code tls}
   * says; it accepts the keepalive pings clients send on connections their calls wait on.
   */
  public static ServerBuilder<?> listening(String bindHost, int port, TlsSettings tls) {
    return ServerTransport.builder(bindHost, port, tls, DataServiceConfig.BIND_HOST);
  }
}
