package io.dataclay.server;

import io.dataclay.proto.CallLatency;
import io.dataclay.server.metrics.RpcMetrics;
import java.util.LinkedHashMap;
import java.util.Map;

/** The CallLatency messages GetStats and GetStatus answer, from a server's {@link RpcMetrics}. */
public final class CallLatencies {
  private CallLatencies() {}

  /** Each RPC name's latency as its message, in the map's order. */
  public static Map<String, CallLatency> toProto(Map<String, RpcMetrics.Latency> latency) {
    Map<String, CallLatency> out = new LinkedHashMap<>();
    latency.forEach((rpc, l) -> out.put(rpc, toProto(l)));
    return out;
  }

  /** One RPC's latency as its message. */
  public static CallLatency toProto(RpcMetrics.Latency l) {
    return CallLatency.newBuilder().addAllBoundsSeconds(l.boundsSeconds()).addAllCounts(l.counts())
        .setCount(l.count()).setSumSeconds(l.sumSeconds()).build();
  }
}
