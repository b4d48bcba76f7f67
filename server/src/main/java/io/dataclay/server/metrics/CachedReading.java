package io.dataclay.server.metrics;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * A value that scrape callbacks read, read from its source at most once per {@code maxAge}: the
 * callbacks of one scrape share one reading, and however often anyone scrapes, the source (a
 * database count, a status built from every environment) is asked no more often than that. A
 * reading that throws counts as a reading: it gives nothing until the next one, and the scrape
 * goes on without the values it would have given.
 */
public final class CachedReading<T> {
  private final Supplier<T> source;
  private final long maxAgeNanos;
  private boolean read;
  private long readAtNanos;
  private T value;

  /** Reads {@code source} at most once per {@code maxAgeMillis}. */
  public CachedReading(Supplier<T> source, long maxAgeMillis) {
    this.source = source;
    this.maxAgeNanos = maxAgeMillis * 1_000_000L;
  }

  /** The last reading, made now if the last one is older than the limit; empty when it failed. */
  public synchronized Optional<T> get() {
    long now = System.nanoTime();
    if (!read || now - readAtNanos >= maxAgeNanos) {
      read = true;
      readAtNanos = now;
      try {
        value = source.get();
      } catch (RuntimeException e) {
        value = null;
      }
    }
    return Optional.ofNullable(value);
  }
}
