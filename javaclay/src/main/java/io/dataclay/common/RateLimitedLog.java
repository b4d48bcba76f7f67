package io.dataclay.common;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Writes at most {@code perInterval} lines of each kind per interval, then counts the rest and
 * writes one summary line ("... and 1,234 more ... were left out") with the first line of that
 * kind in a later interval. Meant for lines a stranger can cause (malformed requests, broken
 * connections): they must not fill the disk, and a flood must still show in the log.
 */
public final class RateLimitedLog {
  private static final int MAX_KINDS = 1_000;
  private static final long SUPPRESSED = -1;
  // set while a summary goes through a limited library logger, so that its filter lets it pass
  private static final ThreadLocal<Boolean> SUMMARY = new ThreadLocal<>();

  private static final class Window {
    long startMs;
    int written;
    long dropped;
  }

  private final Logger log;
  private final int perInterval;
  private final long intervalMs;
  private final LongSupplier clock;
  private final Map<String, Window> windows = new HashMap<>();

  /** Lines to {@code log}: at most {@code perInterval} of each kind per {@code interval}. */
  public RateLimitedLog(Logger log, int perInterval, Duration interval, LongSupplier clock) {
    this.log = log;
    this.perInterval = perInterval;
    this.intervalMs = interval.toMillis();
    this.clock = clock;
  }

  /** Ten lines of each kind per ten seconds, on the wall clock. */
  public static RateLimitedLog of(Logger log) {
    return new RateLimitedLog(log, 10, Duration.ofSeconds(10), System::currentTimeMillis);
  }

  /**
   * Holds the logger {@code name} (a library's, which this code does not call) to ten records per
   * ten seconds, all of one kind. Returns the logger: the caller keeps it, since java.util.logging
   * forgets a logger (and its filter) nobody references.
   */
  public static Logger limit(String name) {
    Logger logger = Logger.getLogger(name);
    RateLimitedLog budget = of(logger);
    logger.setFilter(record -> Boolean.TRUE.equals(SUMMARY.get()) || budget.admit(record.getLevel(), name));
    return logger;
  }

  /** Logs {@code line} (built only when it is written) at {@code level} unless {@code kind} used its budget. */
  public void log(Level level, String kind, Supplier<String> line) {
    log(level, kind, line, null);
  }

  /** As {@link #log(Level, String, Supplier)}, with a throwable whose stack trace goes with the line. */
  public void log(Level level, String kind, Supplier<String> line, Throwable thrown) {
    if (log.isLoggable(level) && admit(level, kind)) {
      log.log(level, line.get(), thrown);
    }
  }

  // Whether a line of kind may be written now; writes the summary of the last interval first.
  private boolean admit(Level level, String kind) {
    long report = take(kind);
    if (report == SUPPRESSED) {
      return false;
    }
    if (report > 0) {
      LogRecord summary = new LogRecord(level, String.format("... and %,d more '%s' lines were left out (at most %d"
          + " every %d s)", report, kind, perInterval, intervalMs / 1000));
      summary.setLoggerName(log.getName());
      SUMMARY.set(true);
      try {
        log.log(summary);
      } finally {
        SUMMARY.remove();
      }
    }
    return true;
  }

  // SUPPRESSED, or how many lines of kind the interval that just ended left out
  private synchronized long take(String kind) {
    long now = clock.getAsLong();
    Window w = windows.get(kind);
    if (w == null) {
      if (windows.size() >= MAX_KINDS) {
        windows.clear();
      }
      w = new Window();
      w.startMs = now;
      windows.put(kind, w);
    }
    long dropped = 0;
    if (now - w.startMs >= intervalMs) {
      dropped = w.dropped;
      w.startMs = now;
      w.written = 0;
      w.dropped = 0;
    }
    if (w.written >= perInterval) {
      w.dropped++;
      return SUPPRESSED;
    }
    w.written++;
    return dropped;
  }
}
