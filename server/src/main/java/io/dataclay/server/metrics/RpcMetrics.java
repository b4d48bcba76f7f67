package io.dataclay.server.metrics;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBucket;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Unit;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.LongSupplier;

/**
 * A server's per-RPC metrics, named as gRPC's OpenTelemetry metrics (gRFC A66), counted once, in
 * this interceptor: {@code grpc.server.call.started} (a counter, by {@code grpc.method}) when a call
 * starts, whether or not it is refused later, and {@code grpc.server.call.duration} (a histogram in
 * seconds, by {@code grpc.method} and {@code grpc.status}) when its status is sent, or as CANCELLED
 * when it ends without one. In Prometheus'
 * text format they read {@code grpc_server_call_started_total{grpc_method}} and
 * {@code grpc_server_call_duration_seconds{grpc_method,grpc_status}}. {@code grpc.method} is the
 * fully qualified name ("dataclay.v1.DataService/CallMethod"), and only the methods of the services
 * this interceptor wraps ever appear, so the labels stay bounded.
 *
 * <p>GetStats and GetStatus report {@link #callsStarted()} and {@link #latencyByMethod()}: the same
 * numbers a scrape shows.
 */
public final class RpcMetrics implements ServerInterceptor {
  /** gRFC A66's bucket boundaries for latency, in seconds. */
  static final double[] LATENCY_BOUNDS = {0, 0.00001, 0.00005, 0.0001, 0.0003, 0.0006, 0.0008, 0.001, 0.002, 0.003,
      0.004, 0.005, 0.006, 0.008, 0.01, 0.013, 0.016, 0.02, 0.025, 0.03, 0.04, 0.05, 0.065, 0.08, 0.1, 0.13, 0.16,
      0.2, 0.25, 0.3, 0.4, 0.5, 0.65, 0.8, 1, 2, 5, 10, 20, 50, 100};

  private static final Status.Code[] CODES = Status.Code.values();

  private final Counter started;
  private final Histogram duration;
  private final LongSupplier nanoTime;
  private final ConcurrentHashMap<String, PerMethod> methods = new ConcurrentHashMap<>();

  /**
   * The durations of one RPC's ended calls, summed over every status: {@code boundsSeconds} are the
   * finite bucket upper bounds, ascending; {@code counts} the calls of each bucket (not cumulative),
   * one more than the bounds, the last for the calls longer than every bound; {@code count} their
   * total and {@code sumSeconds} the time they took.
   */
  public record Latency(List<Double> boundsSeconds, List<Long> counts, long count, double sumSeconds) {
    /** Copies the lists; there is one count more than there are bounds. */
    public Latency {
      boundsSeconds = List.copyOf(boundsSeconds);
      counts = List.copyOf(counts);
      if (counts.size() != boundsSeconds.size() + 1) {
        throw new IllegalArgumentException(counts.size() + " counts for " + boundsSeconds.size() + " bounds");
      }
    }
  }

  /** Registers the two metrics in {@code registry}. */
  public RpcMetrics(PrometheusRegistry registry) {
    this(registry, System::nanoTime);
  }

  /** Registers the two metrics in {@code registry}, timing calls with {@code nanoTime} (tests set the time). */
  RpcMetrics(PrometheusRegistry registry, LongSupplier nanoTime) {
    this.nanoTime = nanoTime;
    started = Counter.builder()
        .name("grpc.server.call.started")
        .help("Calls started on this server, by fully qualified method (gRFC A66), refused ones included.")
        .labelNames("grpc.method")
        .register(registry);
    duration = Histogram.builder()
        .name("grpc.server.call.duration")
        .unit(Unit.SECONDS)
        .help("Time from a call's start to the status the server sent, by method and status code (gRFC A66).")
        .labelNames("grpc.method", "grpc.status")
        .classicOnly()
        .classicUpperBounds(LATENCY_BOUNDS)
        .withoutExemplars()
        .register(registry);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next) {
    long start = nanoTime.getAsLong();
    PerMethod method = method(call.getMethodDescriptor());
    method.started.inc();
    // observed once: when the server sends its status, or, for a call that ends without one (the
    // client cancelled it or its deadline passed, the transport refused a message too large, the
    // handler threw), when it is cancelled, as CANCELLED
    AtomicBoolean ended = new AtomicBoolean();
    ServerCall.Listener<Q> listener = next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
      @Override
      public void close(Status status, Metadata trailers) {
        if (ended.compareAndSet(false, true)) {
          method.duration(status.getCode()).observe((nanoTime.getAsLong() - start) / 1e9);
        }
        super.close(status, trailers);
      }
    }, headers);
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
      @Override
      public void onCancel() {
        if (ended.compareAndSet(false, true)) {
          method.duration(Status.Code.CANCELLED).observe((nanoTime.getAsLong() - start) / 1e9);
        }
        super.onCancel();
      }
    };
  }

  /**
   * Counts a call of {@code method} served outside gRPC (the Data Service's call port serves some
   * of its RPCs as frames) as started now; the answer observes its duration once it ended with a
   * status. The same metrics as a gRPC call's, so a scrape and GetStatus see every call.
   */
  public Ending started(MethodDescriptor<?, ?> method) {
    long start = nanoTime.getAsLong();
    PerMethod m = method(method);
    m.started.inc();
    return code -> m.duration(code).observe((nanoTime.getAsLong() - start) / 1e9);
  }

  /** Ends a call counted by {@link #started(MethodDescriptor)}. */
  @FunctionalInterface
  public interface Ending {
    /** The call ended with {@code code}; call once. */
    void ended(Status.Code code);
  }

  /** Calls started per RPC name ("GetStats"), sorted by name. */
  public Map<String, Long> callsStarted() {
    Map<String, Long> out = new TreeMap<>();
    methods.forEach((fullName, m) -> out.merge(MethodDescriptor.extractBareMethodName(fullName),
        m.started.getLongValue(), Long::sum));
    return out;
  }

  /**
   * The durations of the calls ended per RPC name ("GetStats"), summed over every status, sorted by
   * name; an RPC none of whose calls ended yet is absent. Read from the histogram a scrape reads.
   */
  public Map<String, Latency> latencyByMethod() {
    Map<String, long[]> perBucket = new TreeMap<>();
    Map<String, Long> totals = new TreeMap<>();
    Map<String, Double> sums = new TreeMap<>();
    for (HistogramDataPointSnapshot point : duration.collect().getDataPoints()) {
      String name = MethodDescriptor.extractBareMethodName(point.getLabels().get("grpc.method"));
      long[] into = perBucket.computeIfAbsent(name, k -> new long[LATENCY_BOUNDS.length + 1]);
      // client_java's snapshot holds each bucket's own count (its text format sums them as it
      // writes the le="..." lines); the last bucket's bound is +Inf
      for (ClassicHistogramBucket b : point.getClassicBuckets()) {
        into[Double.isInfinite(b.getUpperBound()) ? LATENCY_BOUNDS.length
            : Arrays.binarySearch(LATENCY_BOUNDS, b.getUpperBound())] += b.getCount();
      }
      totals.merge(name, point.getCount(), Long::sum);
      sums.merge(name, point.hasSum() ? point.getSum() : 0.0, Double::sum);
    }
    List<Double> bounds = Arrays.stream(LATENCY_BOUNDS).boxed().toList();
    Map<String, Latency> out = new TreeMap<>();
    perBucket.forEach((name, counts) -> out.put(name, new Latency(bounds, Arrays.stream(counts).boxed().toList(),
        totals.get(name), sums.get(name))));
    return out;
  }

  private PerMethod method(MethodDescriptor<?, ?> descriptor) {
    String name = descriptor.getFullMethodName();
    PerMethod m = methods.get(name);
    return m != null ? m : methods.computeIfAbsent(name, PerMethod::new);
  }

  /** One method's data points, looked up once (a call then touches no map). */
  private final class PerMethod {
    final String name;
    final CounterDataPoint started;
    final AtomicReferenceArray<DistributionDataPoint> byStatus = new AtomicReferenceArray<>(CODES.length);

    PerMethod(String name) {
      this.name = name;
      this.started = RpcMetrics.this.started.labelValues(name);
    }

    DistributionDataPoint duration(Status.Code code) {
      DistributionDataPoint d = byStatus.get(code.ordinal());
      if (d == null) {
        d = RpcMetrics.this.duration.labelValues(name, code.name());
        byStatus.set(code.ordinal(), d); // the same data point whoever wins: labelValues is idempotent
      }
      return d;
    }
  }
}
