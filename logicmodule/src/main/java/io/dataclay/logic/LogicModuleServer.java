package io.dataclay.logic;

import io.dataclay.logic.service.LogicModuleService;
import io.dataclay.logic.servicer.LogicModuleServicer;
import io.dataclay.rpc.TlsSettings;
import io.dataclay.server.GrpcServer;
import io.dataclay.server.ServerTransport;
import io.grpc.ServerBuilder;
import java.time.Duration;

/**
 * Builds the Logic Module's gRPC server: its service on a {@link GrpcServer}, which starts, stops
 * (letting calls in flight finish for a few seconds) and blocks until shutdown.
 */
public final class LogicModuleServer {
  private static final Duration GRACE = Duration.ofSeconds(5);

  private LogicModuleServer() {}

  /** A server built by {@code builder} (tests pass an in-process builder) serving {@code service}. */
  public static GrpcServer serving(ServerBuilder<?> builder, LogicModuleService service) {
    return serving(builder, service, LogicModuleConfig.DEFAULT_MAX_MESSAGE_BYTES);
  }

  /** A server refusing requests larger than {@code maxMessageBytes} before reading them whole. */
  public static GrpcServer serving(ServerBuilder<?> builder, LogicModuleService service, int maxMessageBytes) {
    return GrpcServer.serving(builder, new LogicModuleServicer(service), service.metrics().rpc(), maxMessageBytes, GRACE);
  }

  /**
   * A server on {@code bindHost:port} only (port 0: any free port), secured as {@code tls} says,
   * refusing requests larger than {@code maxMessageBytes}.
   */
  public static GrpcServer listening(String bindHost, int port, TlsSettings tls, LogicModuleService service,
      int maxMessageBytes) {
    return serving(ServerTransport.builder(bindHost, port, tls, LogicModuleConfig.BIND_HOST), service,
        maxMessageBytes);
  }
}
