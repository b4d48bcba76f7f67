package io.dataclay.logic;

import io.dataclay.logic.service.LogicModuleService;
import io.dataclay.logic.servicer.LogicModuleServicer;
import io.dataclay.rpc.TlsSettings;
import io.dataclay.server.GrpcServer;
import io.dataclay.server.ServerTransport;
import io.grpc.ServerBuilder;
import java.io.IOException;
import java.time.Duration;

/** Runs the Logic Module's gRPC service: start, stop, block until shutdown ({@link GrpcServer}). */
public final class LogicModuleServer {
  private static final Duration GRACE = Duration.ofSeconds(5);

  private final GrpcServer server;

  /** A server built by {@code builder} (tests pass an in-process builder) serving {@code service}. */
  public LogicModuleServer(ServerBuilder<?> builder, LogicModuleService service) {
    this(builder, service, LogicModuleConfig.DEFAULT_MAX_MESSAGE_BYTES);
  }

  /** A server refusing requests larger than {@code maxMessageBytes} before reading them whole. */
  public LogicModuleServer(ServerBuilder<?> builder, LogicModuleService service, int maxMessageBytes) {
    this.server = GrpcServer.serving(builder, new LogicModuleServicer(service), service::countCall, maxMessageBytes,
        GRACE);
  }

  /**
   * A server on {@code bindHost:port} only (port 0: any free port), secured as {@code tls} says,
   * refusing requests larger than {@code maxMessageBytes}.
   */
  public static LogicModuleServer listening(String bindHost, int port, TlsSettings tls, LogicModuleService service,
      int maxMessageBytes) {
    return new LogicModuleServer(ServerTransport.builder(bindHost, port, tls, LogicModuleConfig.BIND_HOST), service,
        maxMessageBytes);
  }

  /**
   * Starts serving.
   *
   * @throws IOException when the port cannot be bound (for instance, it is taken)
   */
  public LogicModuleServer start() throws IOException {
    server.start();
    return this;
  }

  /** The port actually bound (meaningful after {@link #start()}; -1 for in-process servers). */
  public int port() {
    return server.port();
  }

  /** Stops accepting calls, lets calls in flight finish for a few seconds, then cancels the rest. */
  public void stop() {
    server.stop();
  }

  /** Waits until the server has stopped. */
  public void blockUntilShutdown() throws InterruptedException {
    server.blockUntilShutdown();
  }
}
