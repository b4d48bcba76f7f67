package io.dataclay.ds.ee;

import static io.dataclay.ds.TestObjects.bytes;
import static io.dataclay.ds.TestObjects.point;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.client.DataServiceClient;
import io.dataclay.ds.EnvironmentPeer;
import io.dataclay.ds.TestCluster;
import io.dataclay.proto.EnvironmentSpan;
import io.dataclay.proto.ExecuteRequest;
import io.dataclay.proto.ExecuteResult;
import io.dataclay.server.testing.Eventually;
import io.dataclay.server.tracing.Tracing;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * With tracing on, a client's call is one trace: its client span, the Data Service's server span,
 * the span of the environment step (whose traceparent crosses the link) and the steps the
 * environment reports; a make_persistent's registration with the Logic Module joins its trace.
 */
@Timeout(60)
class EnvironmentTracingTest {
  private static final InMemorySpanExporter exported = InMemorySpanExporter.create();
  // installed before the cluster's servers and channels are built, which take their interceptors from it
  private static final Tracing tracing = installed();
  @RegisterExtension static final TestCluster cluster = TestCluster.forTheClass();
  static String token;
  DataServiceClient user;
  UUID point;

  private static Tracing installed() {
    Tracing t = Tracing.of(OpenTelemetrySdk.builder()
        .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exported)).build())
        .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
        .build());
    Tracing.install(t);
    return t;
  }

  @BeforeAll
  static void logIn() throws Exception {
    token = cluster.session("jane");
  }

  @AfterAll
  static void uninstall() {
    Tracing.install(Tracing.off());
    tracing.close();
  }

  @BeforeEach
  void startDataService() throws Exception {
    cluster.startDataService(Map.of());
    user = cluster.client(token);
    point = UUID.randomUUID();
    user.makePersistent(List.of(point(point, "0")), null);
  }

  private static SpanData await(String what, java.util.function.Predicate<SpanData> match) throws Exception {
    return Eventually.await(Duration.ofSeconds(10),
        () -> exported.getFinishedSpanItems().stream().filter(match).findFirst(),
        () -> "no span " + what + " in " + exported.getFinishedSpanItems());
  }

  private static long nanos(Instant t) {
    return TimeUnit.SECONDS.toNanos(t.getEpochSecond()) + t.getNano();
  }

  @Test
  void a_call_the_environment_runs_is_one_trace_down_to_the_environments_steps() throws Exception {
    // setup
    CompletableFuture<byte[]> call = cluster.call(user, point, "area", "(2,)");
    EnvironmentPeer peer = cluster.attach();
    ExecuteRequest req = peer.nextExecute();
    long start = nanos(Instant.now());
    // run: the environment reports two steps, the inner one failed
    peer.answer(ExecuteResult.newBuilder().setCallId(req.getCallId()).setResult(bytes("42"))
        .addSpans(EnvironmentSpan.newBuilder().setName("ee.execute").setStartUnixNano(start)
            .setEndUnixNano(start + 1000).putAttributes("code.function", "area"))
        .addSpans(EnvironmentSpan.newBuilder().setName("ee.method shapes.Point.area").setStartUnixNano(start + 10)
            .setEndUnixNano(start + 900).setError("ValueError: no").setParent(1))
        .build());
    assertEquals("42", new String(call.get(10, TimeUnit.SECONDS)));
    // verify: client -> CallMethod server span -> ee.call -> ee.execute -> ee.method, one trace
    SpanData step = await("ee.call", s -> s.getName().equals("ee.call shapes.Point.area"));
    // W3C: version, trace, span, flags (sampled; the SDK also sets the random-trace-ID bit, 03)
    String[] parts = req.getTraceparent().split("-");
    assertEquals(List.of("00", step.getTraceId(), step.getSpanId()), List.of(parts).subList(0, 3));
    assertEquals(1, Integer.parseInt(parts[3], 16) & 1, req.getTraceparent());
    SpanData server = await("CallMethod server", s -> s.getKind() == SpanKind.SERVER
        && s.getName().equals("dataclay.v1.DataService/CallMethod") && s.getSpanId().equals(step.getParentSpanId()));
    SpanData client = await("CallMethod client", s -> s.getKind() == SpanKind.CLIENT
        && s.getSpanId().equals(server.getParentSpanId()));
    assertEquals("dataclay.v1.DataService/CallMethod", client.getName());
    SpanData execute = await("ee.execute", s -> s.getName().equals("ee.execute"));
    SpanData method = await("ee.method", s -> s.getName().equals("ee.method shapes.Point.area"));
    assertEquals(step.getSpanId(), execute.getParentSpanId());
    assertEquals(execute.getSpanId(), method.getParentSpanId());
    assertEquals(start, execute.getStartEpochNanos());
    assertEquals(start + 1000, execute.getEndEpochNanos());
    assertEquals(StatusCode.ERROR, method.getStatus().getStatusCode());
    for (SpanData s : List.of(server, client, execute, method)) {
      assertEquals(step.getTraceId(), s.getTraceId(), s.getName());
    }
  }

  @Test
  void make_persistents_registration_with_the_logic_module_joins_its_trace() throws Exception {
    // setup: the make_persistent of the setup ran with tracing on
    SpanData makePersistent = await("MakePersistent server", s -> s.getKind() == SpanKind.SERVER
        && s.getName().equals("dataclay.v1.DataService/MakePersistent"));
    // verify: MakePersistent -> ds.register_objects -> RegisterObjects client -> the Logic Module's server span
    SpanData batch = await("ds.register_objects", s -> s.getName().equals("ds.register_objects")
        && s.getTraceId().equals(makePersistent.getTraceId()));
    assertEquals(makePersistent.getSpanId(), batch.getParentSpanId());
    SpanData client = await("RegisterObjects client", s -> s.getKind() == SpanKind.CLIENT
        && s.getParentSpanId().equals(batch.getSpanId()));
    assertEquals("dataclay.v1.LogicModule/RegisterObjects", client.getName());
    Optional<SpanData> lm = Optional.of(await("RegisterObjects server", s -> s.getKind() == SpanKind.SERVER
        && s.getParentSpanId().equals(client.getSpanId())));
    assertTrue(lm.get().getName().endsWith("/RegisterObjects"), lm.get().getName());
  }
}
