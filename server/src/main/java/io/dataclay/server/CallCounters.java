package io.dataclay.server;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Calls served per RPC name since start, as GetStats and GetStatus report them (contention-free
 * counters, fed by {@link CallCounting}); both servers keep one.
 */
public final class CallCounters {
  private final ConcurrentHashMap<String, LongAdder> counts = new ConcurrentHashMap<>();

  /** Counts one call of {@code rpc}. */
  public void count(String rpc) {
    LongAdder c = counts.get(rpc);
    if (c == null) {
      c = counts.computeIfAbsent(rpc, k -> new LongAdder());
    }
    c.increment();
  }

  /** RPC name -> calls, sorted by name. */
  public Map<String, Long> snapshot() {
    Map<String, Long> out = new TreeMap<>();
    counts.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }
}
