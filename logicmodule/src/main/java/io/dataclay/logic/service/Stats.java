package io.dataclay.logic.service;

import java.util.Map;

/**
 * Counters of a running Logic Module: calls per RPC name since start, metadata totals, and the
 * objects garbage collection removed since start.
 */
public record Stats(Map<String, Long> calls, long objects, long aliases, long openSessions, long objectsCollected) {
  /** Copies the call map. */
  public Stats {
    calls = Map.copyOf(calls);
  }
}
