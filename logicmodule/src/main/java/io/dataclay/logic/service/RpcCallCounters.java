package io.dataclay.logic.service;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** Calls served per RPC name since start (thread-safe, lock-free on the counting path). */
public final class RpcCallCounters {
  private final ConcurrentHashMap<String, LongAdder> counts = new ConcurrentHashMap<>();

  /** Counts one call of {@code rpc}. */
  public void count(String rpc) {
    counts.computeIfAbsent(rpc, k -> new LongAdder()).increment();
  }

  /** The counts so far, by RPC name. */
  public Map<String, Long> snapshot() {
    Map<String, Long> copy = new TreeMap<>();
    counts.forEach((rpc, n) -> copy.put(rpc, n.sum()));
    return copy;
  }
}
