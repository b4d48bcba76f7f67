package io.dataclay.server;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A map in least-recently-used order that drops its eldest entry once it holds more than its
 * bound, so per-key state a stranger can create (one entry per account, address or name) stays
 * bounded. Not thread-safe: its owner synchronises.
 */
public final class LruMap<K, V> extends LinkedHashMap<K, V> {
  private static final long serialVersionUID = 1L;

  private final int maxEntries;

  /** An empty map holding at most {@code maxEntries} entries. */
  public LruMap(int maxEntries) {
    super(16, 0.75f, true);
    this.maxEntries = maxEntries;
  }

  @Override
  protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
    return size() > maxEntries;
  }
}
