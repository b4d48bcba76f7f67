package io.dataclay.logic.service;

import java.util.Map;

/** Counters of a running Logic Module: calls per RPC name since start, and metadata totals. */
public record Stats(Map<String, Long> calls, long objects, long aliases, long openSessions) {
  /** Copies the call map. */
  public Stats {
    calls = Map.copyOf(calls);
  }
}
