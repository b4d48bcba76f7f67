package io.dataclay.server.tracing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.client.Channels;
import io.dataclay.proto.DataServiceGrpc;
import io.dataclay.proto.Empty;
import io.dataclay.proto.SnapshotRequest;
import io.dataclay.rpc.TlsSettings;
import io.dataclay.server.GrpcServer;
import io.dataclay.server.ServerTransport;
import io.dataclay.server.metrics.RpcMetrics;
import io.dataclay.server.testing.Eventually;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * With tracing installed, a {@link GrpcServer} opens a server span per call, a child of the trace
 * context the caller sent, current while the service runs; channels built by {@link Channels} send
 * theirs; the metrics interceptor counts the calls as before.
 */
@Timeout(30)
class GrpcTracingTest {
  private static final String THAW = "dataclay.v1.DataService/ThawWrites";
  private final InMemorySpanExporter exported = InMemorySpanExporter.create();
  private final RpcMetrics metrics = new RpcMetrics(new PrometheusRegistry());
  private final AtomicReference<SpanContext> seenByService = new AtomicReference<>();
  private Tracing tracing;
  private GrpcServer server;

  /** ThawWrites records the span current while it runs. */
  private final class Service extends DataServiceGrpc.DataServiceImplBase {
    @Override
    public void thawWrites(SnapshotRequest request, StreamObserver<Empty> out) {
      seenByService.set(Span.current().getSpanContext());
      out.onNext(Empty.getDefaultInstance());
      out.onCompleted();
    }
  }

  @BeforeEach
  void install() {
    OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
        .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exported)).build())
        .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
        .build();
    tracing = Tracing.of(sdk);
    Tracing.install(tracing);
  }

  @AfterEach
  void uninstall() {
    if (server != null) {
      server.stop();
    }
    Tracing.install(Tracing.off());
    tracing.close();
  }

  @Test
  void a_server_span_is_a_child_of_the_incoming_traceparent_and_current_in_the_service() throws Exception {
    // setup
    String name = InProcessServerBuilder.generateName();
    server = GrpcServer.serving(InProcessServerBuilder.forName(name), new Service(), metrics, 1 << 20,
        Duration.ofSeconds(1)).start();
    String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    String parentId = "00f067aa0ba902b7";
    Metadata headers = new Metadata();
    headers.put(Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER), "00-" + traceId + "-" + parentId + "-01");
    ManagedChannel channel = InProcessChannelBuilder.forName(name)
        .intercept(MetadataUtils.newAttachHeadersInterceptor(headers)).build();
    try {
      // run
      DataServiceGrpc.newBlockingStub(channel).thawWrites(SnapshotRequest.newBuilder().setSnapshotId("s").build());
    } finally {
      channel.shutdownNow();
    }
    // verify: one server span named by the RPC conventions, in the caller's trace, under its span
    // (it ends once the server saw the call complete, which may be just after the client did)
    Eventually.await(Duration.ofSeconds(5), () -> !exported.getFinishedSpanItems().isEmpty(), "the server span ended");
    List<SpanData> spans = exported.getFinishedSpanItems();
    assertEquals(1, spans.size(), spans.toString());
    SpanData span = spans.get(0);
    assertEquals(THAW, span.getName());
    assertEquals(SpanKind.SERVER, span.getKind());
    assertEquals(traceId, span.getTraceId());
    assertEquals(parentId, span.getParentSpanId());
    // OpenTelemetry's current RPC conventions: rpc.system.name, and rpc.method fully qualified
    Map<String, String> attributes = new java.util.HashMap<>();
    span.getAttributes().forEach((key, value) -> attributes.put(key.getKey(), value.toString()));
    assertEquals("grpc", attributes.get("rpc.system.name"), attributes.toString());
    assertEquals(THAW, attributes.get("rpc.method"), attributes.toString());
    assertFalse(attributes.containsKey("rpc.system"), attributes.toString());
    // the service ran with the server span current
    assertEquals(span.getSpanContext(), seenByService.get());
    // and the metrics interceptor counted the call as before
    assertEquals(Map.of("ThawWrites", 1L), metrics.callsStarted());
  }

  @Test
  void a_channel_built_by_channels_sends_its_client_span_to_the_server() throws Exception {
    // setup: a real (plaintext) server, a channel from Channels, a span current at the caller
    server = GrpcServer.serving(ServerTransport.builder("127.0.0.1", 0, TlsSettings.plaintext(), "TEST_BIND"),
        new Service(), metrics, 1 << 20, Duration.ofSeconds(1)).start();
    ManagedChannel channel = Channels.forAddress("127.0.0.1", server.port(), TlsSettings.plaintext());
    Span caller = tracing.tracer().spanBuilder("caller").startSpan();
    try (Scope ignored = caller.makeCurrent()) {
      // run
      DataServiceGrpc.newBlockingStub(channel).thawWrites(SnapshotRequest.newBuilder().setSnapshotId("s").build());
    } finally {
      caller.end();
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    // verify: caller -> client span -> server span, one trace
    Eventually.await(Duration.ofSeconds(5), () -> exported.getFinishedSpanItems().size() == 3, "three spans ended");
    List<SpanData> spans = exported.getFinishedSpanItems();
    SpanData client = spans.stream().filter(s -> s.getKind() == SpanKind.CLIENT).findFirst().orElseThrow();
    SpanData serverSpan = spans.stream().filter(s -> s.getKind() == SpanKind.SERVER).findFirst().orElseThrow();
    assertEquals(THAW, client.getName());
    assertEquals(caller.getSpanContext().getSpanId(), client.getParentSpanId());
    assertEquals(client.getSpanId(), serverSpan.getParentSpanId());
    assertTrue(spans.stream().allMatch(s -> s.getTraceId().equals(caller.getSpanContext().getTraceId())),
        spans.toString());
  }
}
