package io.dataclay.ds;

import io.dataclay.rpc.TlsSettings;
import io.dataclay.server.GrpcServer;
import io.dataclay.server.ServerTransport;
import io.grpc.BindableService;
import io.grpc.ServerBuilder;
import io.grpc.ServerCallExecutorSupplier;
import java.io.IOException;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * The Data Service's gRPC server ({@link GrpcServer}): the DataService service on one port, each
 * call run where {@code perCall} says (a pool, or inline on the transport thread for calls that
 * cannot block). Start, stop, block until shutdown; nothing else.
 */
public final class DataServiceServer {
  private static final Duration GRACE = Duration.ofSeconds(2);

  private final GrpcServer server;

  /**
   * A server built from {@code builder} (a port or an in-process name chosen by the caller) that
   * hands the RPC name of each call to {@code countCall}. Only finding the method and asking
   * {@code perCall} run on the transport thread; {@code perCall} must answer an executor (never
   * null) for every call.
   */
  public DataServiceServer(ServerBuilder<?> builder, BindableService dataService, Consumer<String> countCall,
      ServerCallExecutorSupplier perCall, int maxMessageBytes) {
    this.server = GrpcServer.serving(builder.directExecutor().callExecutor(perCall), dataService, countCall,
        maxMessageBytes, GRACE);
  }

  /**
   * A builder listening on {@code bindHost:port} only (port 0: any free port), secured as {@code tls}
   * says; it accepts the keepalive pings clients send on connections their calls wait on.
   */
  public static ServerBuilder<?> listening(String bindHost, int port, TlsSettings tls) {
    return ServerTransport.builder(bindHost, port, tls, DataServiceConfig.BIND_HOST);
  }

  /** Binds and starts serving. */
  public DataServiceServer start() throws IOException {
    server.start();
    return this;
  }

  /** The port actually bound (-1 for in-process servers). */
  public int port() {
    return server.port();
  }

  /**
   * Stops accepting calls, lets calls in flight finish for up to 2 s, then cancels the rest. True
   * when every call finished (answered after all its work was done) before that.
   */
  public boolean stop() {
    return server.stop();
  }

  /** Waits until the server has stopped. */
  public void blockUntilShutdown() throws InterruptedException {
    server.blockUntilShutdown();
  }
}
