package io.dataclay.server.tracing;

import io.dataclay.client.Channels;
import io.grpc.ClientInterceptor;
import io.grpc.ServerInterceptor;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.instrumentation.grpc.v1_6.GrpcTelemetry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A server process's OpenTelemetry tracing: off (a no-op, nothing recorded or sent) unless the
 * standard OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; then the SDK
 * as the OTEL_* variables say (OpenTelemetry's autoconfigure: sampler, protocol, batch delays,
 * headers, resource), with no metrics or logs exporter unless asked (metrics are Prometheus'), the
 * protocol http/protobuf unless asked, and the server's own service name unless OTEL_SERVICE_NAME
 * (or service.name in OTEL_RESOURCE_ATTRIBUTES) gives one; the cluster's periodic calls start no
 * trace ({@link QuietBackground}). gRPC calls in and out are traced by OpenTelemetry's gRPC library
 * instrumentation.
 */
public final class Tracing implements AutoCloseable {
  /** The standard key whose presence turns tracing on. */
  public static final String ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT";
  /** The standard key for the traces' endpoint alone; it turns tracing on too. */
  public static final String TRACES_ENDPOINT = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
  /** The instrumentation scope of the spans dataClay opens itself. */
  public static final String SCOPE = "io.dataclay.server";

  private static final AttributeKey<String> SERVICE_NAME = AttributeKey.stringKey("service.name");
  /** The instrumentation libraries' switch between semantic-convention generations. */
  static final String SEMCONV_OPT_IN = "otel.semconv-stability.opt-in";

  static {
    // OpenTelemetry's current RPC conventions (rpc.system.name, the fully-qualified rpc.method),
    // not the older ones the gRPC instrumentation still makes by default, unless the operator chose
    // (OTEL_SEMCONV_STABILITY_OPT_IN, e.g. rpc/dup for both). Read once, when the instrumentation's
    // classes load: so before OFF below builds the first GrpcTelemetry.
    if (System.getProperty(SEMCONV_OPT_IN) == null && blank(System.getenv("OTEL_SEMCONV_STABILITY_OPT_IN"))) {
      System.setProperty(SEMCONV_OPT_IN, "rpc");
    }
  }

  private static final Tracing OFF = new Tracing(OpenTelemetry.noop(), null);
  private static volatile Tracing current = OFF;

  private final OpenTelemetry openTelemetry;
  private final OpenTelemetrySdk sdk;
  private final GrpcTelemetry grpc;
  private final Tracer tracer;

  private Tracing(OpenTelemetry openTelemetry, OpenTelemetrySdk sdk) {
    this.openTelemetry = openTelemetry;
    this.sdk = sdk;
    this.grpc = GrpcTelemetry.create(openTelemetry);
    this.tracer = openTelemetry.getTracer(SCOPE);
  }

  /** Tracing off: nothing is recorded, no interceptor is added. */
  public static Tracing off() {
    return OFF;
  }

  /**
   * Tracing as {@code env} (the process's environment) says: off when neither endpoint key is set;
   * else the SDK configured from the OTEL_* variables, named {@code serviceName} unless they name it.
   *
   * @throws IllegalArgumentException saying what is wrong when an OTEL_* value is (for instance
   *     OTEL_EXPORTER_OTLP_PROTOCOL=grpc: only http/protobuf has a sender in the servers' jars)
   */
  public static Tracing fromEnvironment(Map<String, String> env, String serviceName) {
    return fromEnvironment(env, serviceName, Map.of());
  }

  /** As {@link #fromEnvironment(Map, String)}, with {@code overrides} (otel.* properties) beating the environment (tests). */
  static Tracing fromEnvironment(Map<String, String> env, String serviceName, Map<String, String> overrides) {
    if (!enabledBy(env)) {
      return OFF;
    }
    try {
      OpenTelemetrySdk sdk = build(serviceName, overrides);
      return new Tracing(sdk, sdk);
    } catch (RuntimeException e) {
      Throwable root = e;
      while (root.getCause() != null) {
        root = root.getCause();
      }
      throw new IllegalArgumentException(root.getMessage() == null ? root.toString() : root.getMessage(), e);
    }
  }

  private static OpenTelemetrySdk build(String serviceName, Map<String, String> overrides) {
    return AutoConfiguredOpenTelemetrySdk.builder()
        .addPropertiesSupplier(() -> Map.of(
            "otel.metrics.exporter", "none",
            "otel.logs.exporter", "none",
            "otel.exporter.otlp.protocol", "http/protobuf"))
        .addResourceCustomizer((resource, config) -> named(resource) ? resource
            : resource.merge(Resource.builder().put(SERVICE_NAME, serviceName).build()))
        .addSamplerCustomizer((sampler, config) -> new QuietBackground(sampler))
        .addPropertiesCustomizer(config -> overrides)
        .disableShutdownHook()
        .build()
        .getOpenTelemetrySdk();
  }

  /** Tracing to an SDK built elsewhere (tests: one with an in-memory exporter); closing shuts it down. */
  public static Tracing of(OpenTelemetrySdk sdk) {
    return new Tracing(sdk, sdk);
  }

  /** Whether {@code env} turns tracing on: one of the endpoint keys is set to something. */
  public static boolean enabledBy(Map<String, String> env) {
    return !blank(env.get(ENDPOINT)) || !blank(env.get(TRACES_ENDPOINT));
  }

  /**
   * Makes {@code tracing} this process's: servers built from now on trace their calls, channels
   * built from now on (Channels) trace theirs, and {@link #current()} answers it.
   */
  public static void install(Tracing tracing) {
    current = tracing;
    Channels.interceptEvery(tracing.enabled() ? tracing.clientInterceptor() : null);
  }

  /**
   * A server's start: builds its tracing from {@code source} (its configuration's OTEL_* settings)
   * and installs it, before any server or channel is built, since they take their interceptors from
   * it.
   *
   * @throws IllegalArgumentException saying the OTEL_* settings are bad, and why
   */
  public static Tracing installFrom(Supplier<Tracing> source) {
    Tracing tracing;
    try {
      tracing = source.get();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("bad tracing configuration (OTEL_*): " + e.getMessage(), e);
    }
    install(tracing);
    return tracing;
  }

  /** The process's tracing ({@link #off()} until one is installed). */
  public static Tracing current() {
    return current;
  }

  /** Whether spans are recorded (an SDK is behind this, not the no-op). */
  public boolean enabled() {
    return sdk != null;
  }

  /** The OpenTelemetry instance (the no-op one when off). */
  public OpenTelemetry openTelemetry() {
    return openTelemetry;
  }

  /** The tracer of the spans dataClay opens itself (execution steps, batches). */
  public Tracer tracer() {
    return tracer;
  }

  /**
   * The interceptor that opens a server span per call, a child of the trace context the caller
   * sent (W3C traceparent), current while the service runs the call.
   */
  public ServerInterceptor serverInterceptor() {
    return grpc.createServerInterceptor();
  }

  /** The interceptor that opens a client span per outgoing call and sends its trace context. */
  public ClientInterceptor clientInterceptor() {
    return grpc.createClientInterceptor();
  }

  /** Exports the spans still buffered (waiting up to 5 s) and stops the SDK; nothing when off. */
  @Override
  public void close() {
    if (sdk != null) {
      sdk.shutdown().join(5, TimeUnit.SECONDS);
    }
  }

  private static boolean named(Resource resource) {
    String name = resource.getAttribute(SERVICE_NAME);
    return name != null && !name.startsWith("unknown_service");
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }
}
