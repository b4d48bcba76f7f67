package io.dataclay.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class RateLimitedLogTest {
  private final AtomicLong now = new AtomicLong(5_000);
  private final List<String> lines = new ArrayList<>();
  private final Logger logger = Logger.getLogger("rate-limited-log-test");

  RateLimitedLogTest() {
    logger.setUseParentHandlers(false);
    logger.addHandler(new Handler() {
      @Override
      public void publish(LogRecord r) {
        lines.add(r.getMessage());
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    });
  }

  @Test
  void a_flood_writes_its_budget_then_one_summary_with_the_count() {
    // setup
    RateLimitedLog log = new RateLimitedLog(logger, 3, Duration.ofSeconds(10), now::get);
    // run
    for (int i = 0; i < 2_000; i++) {
      log.log(Level.WARNING, "malformed request", () -> "bad request");
    }
    log.log(Level.WARNING, "bad token", () -> "other kind");
    now.addAndGet(10_000);
    log.log(Level.WARNING, "malformed request", () -> "bad request");
    // verify
    assertEquals(List.of("bad request", "bad request", "bad request", "other kind"), lines.subList(0, 4));
    assertTrue(lines.get(4).startsWith("... and 1,997 more 'malformed request' lines were left out"), lines.get(4));
    assertEquals("bad request", lines.get(5));
    assertEquals(6, lines.size());
  }

  @Test
  void a_limited_library_logger_passes_ten_records_of_a_flood() {
    // setup
    Logger library = RateLimitedLog.limit("rate-limited-log-test.library");
    List<String> seen = new ArrayList<>();
    library.setUseParentHandlers(false);
    library.addHandler(new Handler() {
      @Override
      public void publish(LogRecord r) {
        if (isLoggable(r)) {
          seen.add(r.getMessage());
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    });
    // run
    for (int i = 0; i < 2_000; i++) {
      library.log(Level.INFO, "Transport failed", new IllegalStateException("garbage"));
    }
    // verify
    assertEquals(10, seen.size());
  }
}
