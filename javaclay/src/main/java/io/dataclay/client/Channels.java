package io.dataclay.client;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.concurrent.TimeUnit;

/** Builds the channels every dataClay component uses (plaintext, no message size limit). */
public final class Channels {
  private Channels() {}

  /** A channel to {@code host:port}. Objects can be large, so messages are not size-limited. */
  public static ManagedChannel forAddress(String host, int port) {
    return NettyChannelBuilder.forAddress(host, port)
        .usePlaintext()
        .maxInboundMessageSize(Integer.MAX_VALUE)
        .keepAliveTime(30, TimeUnit.SECONDS)
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
