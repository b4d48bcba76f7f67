package io.dataclay.server;

import io.dataclay.rpc.SessionMetadata;
import io.dataclay.server.metrics.RpcMetrics;
import io.dataclay.server.tracing.Tracing;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The life of one dataClay gRPC server, the same for the Logic Module and the Data Service: its
 * service guarded against malformed requests ({@link MalformedRequests}), each call counted and
 * timed by method and status ({@link RpcMetrics}, refused calls included), traced when the process's
 * {@link Tracing} is on (a server span per call, a child of the caller's trace context, current
 * while the service runs the call), the caller's session
 * metadata in each call's context, requests above a size refused before they are read whole;
 * started, its port reported, and stopped with a grace period for the calls in flight. Where it
 * listens and on which threads calls run is the builder's business ({@link ServerTransport}, or an
 * in-process builder in tests).
 */
public final class GrpcServer {
  private final Server server;
  private final Duration grace;

  private GrpcServer(Server server, Duration grace) {
    this.server = server;
    this.grace = grace;
  }

  /**
   * A server built by {@code builder} serving {@code service}, counting and timing each call in
   * {@code metrics}, refusing requests larger than {@code maxMessageBytes}, whose
   * {@link #stop()} waits {@code grace} for calls in flight.
   */
  public static GrpcServer serving(ServerBuilder<?> builder, BindableService service, RpcMetrics metrics,
      int maxMessageBytes, Duration grace) {
    // the last interceptor runs first: every call is counted, whatever refuses it later; the trace
    // context the tracing interceptor makes current rides in the gRPC context of the calls inside it
    // (the instrumentation bridges gRPC's context to OpenTelemetry's), so the service runs in it
    List<ServerInterceptor> interceptors = new ArrayList<>(List.of(SessionMetadata.serverInterceptor()));
    Tracing tracing = Tracing.current();
    if (tracing.enabled()) {
      interceptors.add(tracing.serverInterceptor());
    }
    interceptors.add(metrics);
    return new GrpcServer(builder
        .addService(ServerInterceptors.intercept(MalformedRequests.guard(service.bindService()), interceptors))
        .maxInboundMessageSize(maxMessageBytes)
        .build(), grace);
  }

  /**
   * Binds and starts serving; returns this server.
   *
   * @throws IOException when the port cannot be bound (for instance, it is taken)
   */
  public GrpcServer start() throws IOException {
    server.start();
    return this;
  }

  /** The port actually bound (meaningful once started; -1 for in-process servers). */
  public int port() {
    return server.getPort();
  }

  /**
   * Stops accepting calls, lets calls in flight finish for the grace period, then cancels the rest
   * (and waits as long again for them to go). True when every call finished within the grace period.
   */
  public boolean stop() {
    server.shutdown();
    try {
      if (server.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
        return true;
      }
      server.shutdownNow();
      server.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS);
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
