package io.dataclay.ds;

import io.dataclay.server.ServerTransport;
import io.dataclay.server.MalformedRequests;
import io.dataclay.rpc.SessionMetadata;
import io.dataclay.rpc.TlsSettings;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerCallExecutorSupplier;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * The Data Service's gRPC server: the DataService service on one port, session metadata exposed
 * to the logic, requests above a configured size refused before they are read whole, and each call run where {@code perCall} says (a pool, or
 * inline on the transport thread for calls that cannot block). Start, stop, block until shutdown;
 * nothing else.
 */
public final class DataServiceServer {
  private final Server server;

  /**
   * A server built from {@code builder} (a port or an in-process name chosen by the caller).
   * Only finding the method and asking {@code perCall} run on the transport thread; {@code perCall}
   * must answer an executor (never null) for every call.
   */
  public DataServiceServer(ServerBuilder<?> builder, BindableService dataService, ServerCallExecutorSupplier perCall,
      int maxMessageBytes) {
    this.server = builder
        .directExecutor()
        .callExecutor(perCall)
        .addService(MalformedRequests.guard(dataService.bindService()))
        .intercept(SessionMetadata.serverInterceptor())
        .maxInboundMessageSize(maxMessageBytes)
        .build();
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
    return server.getPort();
  }

  /**
   * Stops accepting calls, lets calls in flight finish for up to 2 s, then cancels the rest. True
   * when every call finished (answered after all its work was done) before that.
   */
  public boolean stop() {
    server.shutdown();
    try {
      if (server.awaitTermination(2, TimeUnit.SECONDS)) {
        return true;
      }
      server.shutdownNow();
      server.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      server.shutdownNow();
      Thread.currentThread().interrupt();
    }
    return false;
  }

  /** Waits until the server has stopped. */
  public void blockUntilShutdown() throws InterruptedException {
    server.awaitTermination();
  }
}
