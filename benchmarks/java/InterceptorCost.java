import io.dataclay.server.metrics.ServerMetrics;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * What counting and timing a call in {@code RpcMetrics} (gRFC A66's two metrics) costs, alone: the
 * same empty unary method on two in-process gRPC servers in this JVM, one with the interceptor, one
 * without, called in alternating blocks from one thread. In-process calls take a few microseconds,
 * so the interceptor's share is not lost in a network round trip's noise. Prints, per round, the
 * mean and p50 per call of each and the difference.
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
    Server plain = InProcessServerBuilder.forName("plain").directExecutor().addService(echo).build().start();
    Server counted = InProcessServerBuilder.forName("counted").directExecutor()
        .addService(ServerInterceptors.intercept(echo, metrics.rpc())).build().start();
    ManagedChannel toPlain = InProcessChannelBuilder.forName("plain").directExecutor().build();
    ManagedChannel toCounted = InProcessChannelBuilder.forName("counted").directExecutor().build();
    byte[] request = new byte[16];
    long[] a = new long[calls];
    long[] b = new long[calls];
    System.out.printf("%,d calls per block, %d rounds; %s, %s%n", calls, rounds, System.getProperty("java.vm.name"),
        System.getProperty("java.version"));
    for (int round = 0; round <= rounds; round++) {
      boolean plainFirst = round % 2 == 0;
      time(plainFirst ? toPlain : toCounted, request, plainFirst ? a : b);
      time(plainFirst ? toCounted : toPlain, request, plainFirst ? b : a);
      if (round == 0) {
        continue; // warm-up: the JIT compiles both paths
      }
      double meanA = mean(a);
      double meanB = mean(b);
      System.out.printf("round %d: without %.0f ns mean / %d ns p50; with RpcMetrics %.0f ns mean / %d ns p50;"
          + " difference %.0f ns mean, %d ns p50%n", round, meanA, p50(a), meanB, p50(b), meanB - meanA,
          p50(b) - p50(a));
    }
    System.out.println("calls counted: " + metrics.rpc().callsStarted());
    toPlain.shutdownNow();
    toCounted.shutdownNow();
    plain.shutdownNow();
    counted.shutdownNow();
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
