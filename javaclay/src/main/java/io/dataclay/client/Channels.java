package io.dataclay.client;

import io.dataclay.rpc.TlsSettings;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import java.util.concurrent.TimeUnit;

/**
 * Builds the channels every dataClay component uses: secured as its {@link TlsSettings} say, no
 * message size limit, a failure to connect explained when TLS is its cause
 * ({@link TlsDiagnosis}), and a call to a server that went silent failed within the process's
 * unreachable time ({@link LivenessWatch}).
 */
public final class Channels {
  /** Default of DATACLAY_UNREACHABLE_MS: how long a silent server is waited for. */
  public static final long DEFAULT_UNREACHABLE_MS = 1200;

  private static volatile long unreachableMs = DEFAULT_UNREACHABLE_MS;
  private static volatile ClientInterceptor every;

  private Channels() {}

  /**
   * Sets, for channels built from now on in this process, how long a call waits for a server that
   * answers neither it nor a ping before failing with UNAVAILABLE (0: forever). Each process's
   * configuration (DATACLAY_UNREACHABLE_MS) sets it once at start.
   */
  public static void unreachableAfter(long millis) {
    if (millis < 0) {
      throw new IllegalArgumentException("the unreachable time must be 0 or positive, not " + millis);
    }
    unreachableMs = millis;
  }

  /** The unreachable time channels built now get (see {@link #unreachableAfter}). */
  public static long unreachableMs() {
    return unreachableMs;
  }

  /**
   * Sets, for channels built from now on in this process, one more interceptor on every call (null:
   * none). The servers install their tracing's here at start; the client library never sets one.
   */
  public static void interceptEvery(ClientInterceptor interceptor) {
    every = interceptor;
  }

  /**
   * Whether a call that failed after {@code nanos} was failed because its server stayed silent for
   * the unreachable time (unreachable, frozen or gone) rather than refusing or restarting: such a
   * server is not asked again at once.
   */
  public static boolean wentSilent(long nanos) {
    long ms = unreachableMs;
    return ms > 0 && nanos >= ms * 750_000L;
  }

  /** A channel to {@code host:port} secured by {@code tls}. Objects can be large, so messages are not size-limited. */
  public static ManagedChannel forAddress(String host, int port, TlsSettings tls) {
    long silentMs = unreachableMs;
    LivenessWatch liveness = new LivenessWatch(host + ":" + port, silentMs);
    NettyChannelBuilder builder = NettyChannelBuilder.forAddress(host, port, tls.channelCredentials())
        .maxInboundMessageSize(Integer.MAX_VALUE)
        .keepAliveTime(30, TimeUnit.SECONDS)
        .intercept(new TlsDiagnosis(host, port, tls), liveness);
    ClientInterceptor extra = every;
    if (extra != null) {
      // added last, so it runs first: its span covers the whole call, and its context goes out in the headers
      builder.intercept(extra);
    }
    if (silentMs > 0) {
      // a connection attempt to a host that does not answer gives up when a call would (netty: 30 s)
      builder.withOption(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, silentMs));
    }
    ManagedChannel channel = builder.build();
    liveness.watching(channel);
    return channel;
  }

  /** Shuts a channel down, waiting briefly for calls in flight. */
  public static void close(ManagedChannel channel) {
    channel.shutdown();
    try {
      if (!channel.awaitTermination(2, TimeUnit.SECONDS)) {
        channel.shutdownNow();
      }
    } catch (InterruptedException e) {
      channel.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
