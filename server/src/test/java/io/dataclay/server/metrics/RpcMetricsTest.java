package io.dataclay.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.ByteString;
import com.google.protobuf.BytesValue;
import io.dataclay.proto.DataServiceGrpc;
import io.dataclay.proto.Empty;
import io.dataclay.proto.ImportChunk;
import io.dataclay.proto.ImportReceipt;
import io.dataclay.proto.SnapshotRequest;
import io.dataclay.server.GrpcServer;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A {@link GrpcServer} counts each call once when it starts and times it by status, with gRFC A66's
 * names as Prometheus exposes them; GetStats' numbers are the same counters.
 */
@Timeout(30)
class RpcMetricsTest {
  private static final String THAW = "dataclay.v1.DataService/ThawWrites";
  private final PrometheusRegistry registry = new PrometheusRegistry();
  /** The interceptor's time, in nanoseconds: it moves only when a call says it took a while. */
  private final AtomicLong nanos = new AtomicLong();
  private final RpcMetrics metrics = new RpcMetrics(registry, nanos::get);
  private GrpcServer server;
  private ManagedChannel channel;

  /**
   * ThawWrites answers at once or fails, or, for "took:N" and "failed:N", moves the interceptor's
   * time by N ns first; ImportObjects receipts the chunks it got.
   */
  private static final class Service extends DataServiceGrpc.DataServiceImplBase {
    private final AtomicLong nanos;

    Service(AtomicLong nanos) {
      this.nanos = nanos;
    }

    @Override
    public void thawWrites(SnapshotRequest request, StreamObserver<Empty> out) {
      String id = request.getSnapshotId();
      if (id.startsWith("took:") || id.startsWith("failed:")) {
        nanos.addAndGet(Long.parseLong(id.substring(id.indexOf(':') + 1)));
        if (id.startsWith("failed:")) {
          out.onError(Status.FAILED_PRECONDITION.asRuntimeException());
          return;
        }
      }
      if (request.getSnapshotId().equals("hang")) {
        return; // never answers: the client's deadline ends the call
      }
      if (request.getSnapshotId().equals("bad")) {
        out.onError(Status.FAILED_PRECONDITION.asRuntimeException());
        return;
      }
      out.onNext(Empty.getDefaultInstance());
      out.onCompleted();
    }

    @Override
    public StreamObserver<ImportChunk> importObjects(StreamObserver<ImportReceipt> out) {
      return new StreamObserver<>() {
        private long chunks;

        @Override
        public void onNext(ImportChunk chunk) {
          chunks++;
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
          out.onNext(ImportReceipt.newBuilder().setObjects(chunks).build());
          out.onCompleted();
        }
      };
    }
  }

  @BeforeEach
  void serve() throws IOException {
    String name = InProcessServerBuilder.generateName();
    server = GrpcServer.serving(InProcessServerBuilder.forName(name), new Service(nanos), metrics, 1 << 20,
        Duration.ofSeconds(1));
    server.start();
    channel = InProcessChannelBuilder.forName(name).build();
  }

  @AfterEach
  void stop() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.stop();
  }

  private String scrape() throws IOException {
    var out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.create().write(out, registry.scrape());
    return out.toString(StandardCharsets.UTF_8);
  }

  private static void assertLine(String expected, String text) {
    if (!text.lines().anyMatch(expected::equals)) {
      throw new AssertionError("no line " + expected + " in:\n" + text);
    }
  }

  @Test
  void each_call_is_counted_once_and_timed_by_its_status_also_when_it_fails() throws IOException {
    // setup
    var stub = DataServiceGrpc.newBlockingStub(channel);
    // run
    stub.thawWrites(SnapshotRequest.newBuilder().setSnapshotId("s").build());
    assertThrows(StatusRuntimeException.class,
        () -> stub.thawWrites(SnapshotRequest.newBuilder().setSnapshotId("bad").build()));
    // verify
    assertEquals(Map.of("ThawWrites", 2L), metrics.callsStarted());
    String text = scrape();
    assertLine("grpc_server_call_started_total{grpc_method=\"" + THAW + "\"} 2.0", text);
    assertLine("grpc_server_call_duration_seconds_count{grpc_method=\"" + THAW + "\",grpc_status=\"OK\"} 1", text);
    assertLine("grpc_server_call_duration_seconds_count{grpc_method=\"" + THAW
        + "\",grpc_status=\"FAILED_PRECONDITION\"} 1", text);
    assertLine("grpc_server_call_duration_seconds_bucket{grpc_method=\"" + THAW
        + "\",grpc_status=\"OK\",le=\"+Inf\"} 1", text);
  }

  private static SnapshotRequest thaw(String id) {
    return SnapshotRequest.newBuilder().setSnapshotId(id).build();
  }

  @Test
  void latency_puts_each_ended_call_in_its_own_bucket_and_sums_every_status() throws IOException {
    // setup
    var stub = DataServiceGrpc.newBlockingStub(channel);
    // run: three calls that succeed in 0.5 ms, 7 ms and 3 s, one that fails after 200 s
    stub.thawWrites(thaw("took:500000"));
    stub.thawWrites(thaw("took:7000000"));
    stub.thawWrites(thaw("took:3000000000"));
    assertThrows(StatusRuntimeException.class, () -> stub.thawWrites(thaw("failed:200000000000")));
    // verify: buckets (0.0003, 0.0006], (0.006, 0.008], (2, 5] and the unbounded one, each of its own
    Map<String, RpcMetrics.Latency> latency = metrics.latencyByMethod();
    assertEquals(List.of("ThawWrites"), List.copyOf(latency.keySet()));
    RpcMetrics.Latency thaw = latency.get("ThawWrites");
    List<Double> bounds = Arrays.stream(RpcMetrics.LATENCY_BOUNDS).boxed().toList();
    assertEquals(bounds, thaw.boundsSeconds());
    long[] expected = new long[bounds.size() + 1];
    expected[bounds.indexOf(0.0006)] = 1;
    expected[bounds.indexOf(0.008)] = 1;
    expected[bounds.indexOf(5.0)] = 1;
    expected[bounds.size()] = 1;
    assertEquals(Arrays.stream(expected).boxed().toList(), thaw.counts());
    assertEquals(4, thaw.count());
    assertEquals(thaw.count(), thaw.counts().stream().mapToLong(Long::longValue).sum());
    assertEquals(203.0075, thaw.sumSeconds(), 1e-9);
    // the scrape shows the same calls, cumulated per status
    assertLine("grpc_server_call_duration_seconds_bucket{grpc_method=\"" + THAW
        + "\",grpc_status=\"OK\",le=\"0.008\"} 2", scrape());
  }

  @Test
  void latency_lists_only_rpcs_with_an_ended_call() {
    // run
    var nothingYet = metrics.latencyByMethod();
    DataServiceGrpc.newBlockingStub(channel).thawWrites(thaw("s"));
    // verify
    assertEquals(Map.of(), nothingYet);
    assertEquals(1, metrics.latencyByMethod().get("ThawWrites").count());
  }

  @Test
  void a_client_streaming_call_is_counted_once_however_many_messages_it_sends() throws Exception {
    // setup
    var receipt = new CompletableFuture<ImportReceipt>();
    StreamObserver<ImportChunk> in = DataServiceGrpc.newStub(channel).importObjects(new StreamObserver<>() {
      @Override
      public void onNext(ImportReceipt r) {
        receipt.complete(r);
      }

      @Override
      public void onError(Throwable t) {
        receipt.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {}
    });
    // run
    in.onNext(ImportChunk.getDefaultInstance());
    in.onNext(ImportChunk.getDefaultInstance());
    in.onCompleted();
    // verify
    assertEquals(2, receipt.get(10, TimeUnit.SECONDS).getObjects());
    assertEquals(Map.of("ImportObjects", 1L), metrics.callsStarted());
  }

  @Test
  void a_malformed_request_refused_before_the_method_runs_is_counted_with_its_status() throws IOException {
    // setup: a ThawWrites request whose snapshot_id (field 1) is not UTF-8, which proto3 refuses to parse
    MethodDescriptor<BytesValue, Empty> raw = DataServiceGrpc.getThawWritesMethod()
        .toBuilder(ProtoUtils.marshaller(BytesValue.getDefaultInstance()),
            ProtoUtils.marshaller(Empty.getDefaultInstance()))
        .build();
    BytesValue notUtf8 = BytesValue.of(ByteString.copyFrom(new byte[] {(byte) 0xff, (byte) 0xfe}));
    // run
    StatusRuntimeException refused = assertThrows(StatusRuntimeException.class,
        () -> ClientCalls.blockingUnaryCall(channel, raw, CallOptions.DEFAULT, notUtf8));
    // verify
    assertEquals(Status.Code.INVALID_ARGUMENT, refused.getStatus().getCode());
    assertEquals(Map.of("ThawWrites", 1L), metrics.callsStarted());
    assertLine("grpc_server_call_duration_seconds_count{grpc_method=\"" + THAW
        + "\",grpc_status=\"INVALID_ARGUMENT\"} 1", scrape());
  }

  @Test
  void a_call_that_ends_without_a_status_is_timed_as_cancelled() throws Exception {
    // setup
    var stub = DataServiceGrpc.newBlockingStub(channel).withDeadlineAfter(200, TimeUnit.MILLISECONDS);
    // run
    StatusRuntimeException late = assertThrows(StatusRuntimeException.class,
        () -> stub.thawWrites(SnapshotRequest.newBuilder().setSnapshotId("hang").build()));
    // verify: the server hears of the cancellation on its own time
    assertEquals(Status.Code.DEADLINE_EXCEEDED, late.getStatus().getCode());
    String line = "grpc_server_call_duration_seconds_count{grpc_method=\"" + THAW + "\",grpc_status=\"CANCELLED\"} 1";
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!scrape().lines().anyMatch(line::equals) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertLine(line, scrape());
    assertEquals(Map.of("ThawWrites", 1L), metrics.callsStarted());
  }

  @Test
  void a_call_served_outside_grpc_is_counted_and_timed_with_the_grpc_calls_of_its_method() throws IOException {
    // setup: one ThawWrites over gRPC
    DataServiceGrpc.newBlockingStub(channel).thawWrites(SnapshotRequest.newBuilder().setSnapshotId("ok").build());
    // run: two more served elsewhere (the call port), one of them failing after 2 ms
    RpcMetrics.Ending first = metrics.started(DataServiceGrpc.getThawWritesMethod());
    RpcMetrics.Ending second = metrics.started(DataServiceGrpc.getThawWritesMethod());
    first.ended(Status.Code.OK);
    nanos.addAndGet(2_000_000);
    second.ended(Status.Code.PERMISSION_DENIED);
    // verify
    assertEquals(Map.of("ThawWrites", 3L), metrics.callsStarted());
    assertEquals(3, metrics.latencyByMethod().get("ThawWrites").count());
    assertLine("grpc_server_call_duration_seconds_count{grpc_method=\"" + THAW
        + "\",grpc_status=\"PERMISSION_DENIED\"} 1", scrape());
    assertLine("grpc_server_call_duration_seconds_count{grpc_method=\"" + THAW + "\",grpc_status=\"OK\"} 2",
        scrape());
  }
}
