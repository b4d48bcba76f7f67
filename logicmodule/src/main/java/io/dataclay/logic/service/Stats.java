package io.dataclay.logic.service;

import io.dataclay.logic.events.ClusterEvent;
import io.dataclay.server.metrics.RpcMetrics;
import java.util.List;
import java.util.Map;

/**
 * Counters of a running Logic Module: calls per RPC name since start and the durations of those
 * that ended, metadata totals, the objects garbage collection removed since start, the newest
 * cluster events (oldest first), and the users' open sessions per account.
 */
public record Stats(Map<String, Long> calls, long objects, long aliases, long openSessions, long objectsCollected,
    Map<String, RpcMetrics.Latency> latency, List<ClusterEvent> events, Map<String, Long> sessionsByAccount) {
  /** Copies the maps and the list. */
  public Stats {
    calls = Map.copyOf(calls);
    latency = Map.copyOf(latency);
    events = List.copyOf(events);
    sessionsByAccount = Map.copyOf(sessionsByAccount);
  }
}
