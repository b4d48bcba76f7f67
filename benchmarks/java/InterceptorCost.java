import io.dataclay.server.metrics.ServerMetrics;
import io.dataclay.server.tracing.Tracing;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a server's per-call instrumentation costs, alone: the same empty unary method on in-process
 * gRPC servers in this JVM, one bare and one per instrumentation, called in rotating blocks from
 * one thread. The instrumentations are the servers' own: {@code RpcMetrics} (gRFC A66's two
 * metrics), and OpenTelemetry's gRPC server interceptor from {@link Tracing} with the sampler off,
 * at 1 % and at 100 %, its spans batched as in the servers and handed to an exporter that drops
 * them (the export's network cost is not the call's). The calls come from a plain channel, as a
 * client's that sends no trace context, so the server's sampler decides. In-process calls take a
 * few microseconds, so a few hundred nanoseconds show. Prints, per round, each server's mean and
 * p50 per call and its p50 difference to the bare one.
 *
 * <p>Whether gRPC's context storage is OpenTelemetry's (the opentelemetry-grpc library's
 * io.grpc.override.ContextStorageOverride, present in the servers' jars) changes every server
 * here, the bare one included: run this once on the jar and once on a copy without that class to
 * see it. The first line says which.
 *
 * <p>Usage: java -cp dataservice.jar:. InterceptorCost [calls per block] [rounds]
 */
public final class InterceptorCost {
  private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    }
  };
  private static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
      .setType(MethodDescriptor.MethodType.UNARY)
      .setFullMethodName("bench.Echo/Echo")
      .setRequestMarshaller(BYTES)
      .setResponseMarshaller(BYTES)
      .build();

  /** Spans counted and dropped. */
  private static final class Dropped implements SpanExporter {
    final LongAdder spans = new LongAdder();

    @Override
    public CompletableResultCode export(Collection<SpanData> batch) {
      spans.add(batch.size());
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }

  private record Variant(String name, ManagedChannel channel, Server server, long[] times) {}

  public static void main(String[] args) throws Exception {
    int calls = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    ServerServiceDefinition echo = ServerServiceDefinition.builder("bench.Echo")
        .addMethod(ECHO, ServerCalls.asyncUnaryCall((request, out) -> {
          out.onNext(request);
          out.onCompleted();
        }))
        .build();
    ServerMetrics metrics = new ServerMetrics();
    Dropped dropped = new Dropped();
    List<Tracing> tracings = new ArrayList<>();
    List<Variant> variants = new ArrayList<>();
    variants.add(variant("bare", echo, null, calls));
    variants.add(variant("RpcMetrics", echo, metrics.rpc(), calls));
    for (String[] sampling : new String[][] {{"tracing, sampler off", "0"}, {"tracing 1 %", "0.01"},
        {"tracing 100 %", "1"}}) {
      Tracing tracing = Tracing.of(OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
          .setSampler(Sampler.parentBased(Sampler.traceIdRatioBased(Double.parseDouble(sampling[1]))))
          .addSpanProcessor(BatchSpanProcessor.builder(dropped).build())
          .build()).build());
      tracings.add(tracing);
      variants.add(variant(sampling[0], echo, tracing.serverInterceptor(), calls));
    }
    byte[] request = new byte[16];
    System.out.printf("%,d calls per block, %d rounds; %s %s; gRPC context storage: %s%n", calls, rounds,
        System.getProperty("java.vm.name"), System.getProperty("java.version"), contextStorage());
    for (int round = 0; round <= rounds; round++) {
      for (int i = 0; i < variants.size(); i++) {   // each round starts with the next variant
        Variant v = variants.get((round + i) % variants.size());
        time(v.channel(), request, v.times());
      }
      if (round == 0) {
        continue; // warm-up: the JIT compiles every path
      }
      long bare = p50(variants.get(0).times());
      StringBuilder line = new StringBuilder("round " + round + ":");
      for (Variant v : variants) {
        line.append(String.format("  %s %.0f/%d", v.name(), mean(v.times()), p50(v.times())));
        if (v != variants.get(0)) {
          line.append(String.format(" (%+d)", p50(v.times()) - bare));
        }
        line.append(";");
      }
      System.out.println(line + "  ns mean/p50 (p50 difference to bare)");
    }
    for (Tracing tracing : tracings) {
      tracing.close();   // flushes the batches
    }
    long perBlock = (long) calls * (rounds + 1);
    System.out.printf("calls counted by RpcMetrics: %s; spans exported: %,d (by the 1 %% and 100 %% servers, of %,d"
        + " calls each)%n", metrics.rpc().callsStarted(), dropped.spans.sum(), perBlock);
    for (Variant v : variants) {
      v.channel().shutdownNow();
      v.server().shutdownNow();
    }
  }

  private static Variant variant(String name, ServerServiceDefinition echo, ServerInterceptor interceptor, int calls)
      throws IOException {
    String address = "bench-" + name;
    Server server = InProcessServerBuilder.forName(address).directExecutor()
        .addService(interceptor == null ? echo : ServerInterceptors.intercept(echo, interceptor)).build().start();
    return new Variant(name, InProcessChannelBuilder.forName(address).directExecutor().build(), server,
        new long[calls]);
  }

  private static String contextStorage() {
    try {
      Class.forName("io.grpc.override.ContextStorageOverride");
      return "OpenTelemetry's (io.grpc.override.ContextStorageOverride)";
    } catch (ClassNotFoundException e) {
      return "gRPC's own (no override on the class path)";
    }
  }

  private static void time(ManagedChannel channel, byte[] request, long[] out) {
    for (int i = 0; i < out.length; i++) {
      long t0 = System.nanoTime();
      ClientCalls.blockingUnaryCall(channel, ECHO, io.grpc.CallOptions.DEFAULT, request);
      out[i] = System.nanoTime() - t0;
    }
  }

  private static double mean(long[] xs) {
    return Arrays.stream(xs).average().orElse(0);
  }

  private static long p50(long[] xs) {
    long[] sorted = xs.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }
}
