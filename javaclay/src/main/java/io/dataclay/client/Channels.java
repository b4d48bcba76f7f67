package io.dataclay.client;

import io.dataclay.rpc.TlsSettings;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.concurrent.TimeUnit;

/**
 * Builds the channels every dataClay component uses: secured as its {@link TlsSettings} say, no
 * message size limit, and a failure to connect explained when TLS is its cause
 * ({@link TlsDiagnosis}).
 */
public final class Channels {
  private Channels() {}

  /** A channel to {@code host:port} secured by {@code tls}. Objects can be large, so messages are not size-limited. */
  public static ManagedChannel forAddress(String host, int port, TlsSettings tls) {
    return NettyChannelBuilder.forAddress(host, port, tls.channelCredentials())
        .maxInboundMessageSize(Integer.MAX_VALUE)
        .keepAliveTime(30, TimeUnit.SECONDS)
        .intercept(new TlsDiagnosis(host, port, tls))
        .build();
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
