package io.dataclay.logic.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.testing.TestClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The cluster's event history: bounded, newest kept, oldest first, stamped by the Logic Module's clock. */
@Timeout(30)
class ClusterEventsTest {
  private final TestClock clock = new TestClock();
  private final ClusterEvents events = new ClusterEvents(clock);

  @Test
  void the_history_keeps_the_newest_events_oldest_first_with_the_time_each_was_recorded() {
    // setup
    long start = clock.millis();
    // run: 50 more events than the history holds, one millisecond apart
    for (int i = 0; i < ClusterEvents.CAPACITY + 50; i++) {
      events.record(ClusterEvent.GC, "", i, 0, "examined " + i + " (periodic)");
      clock.advance(Duration.ofMillis(1));
    }
    // verify
    List<ClusterEvent> kept = events.list();
    assertEquals(ClusterEvents.CAPACITY, kept.size());
    for (int i = 0; i < kept.size(); i++) {
      ClusterEvent e = kept.get(i);
      assertEquals(50 + i, e.objects());
      assertEquals(start + 50 + i, e.atMs());
      assertEquals(ClusterEvent.GC, e.kind());
      assertEquals("examined " + (50 + i) + " (periodic)", e.detail());
    }
  }

  @Test
  void an_empty_history_lists_nothing_and_a_listing_does_not_change_with_later_events() {
    // run
    List<ClusterEvent> before = events.list();
    events.record(ClusterEvent.BACKEND_SILENT, "b", 0, 0, "");
    List<ClusterEvent> after = events.list();
    events.record(ClusterEvent.BACKEND_BACK, "b", 0, 0, "");
    // verify
    assertEquals(List.of(), before);
    assertEquals(List.of(new ClusterEvent(clock.millis(), ClusterEvent.BACKEND_SILENT, "b", 0, 0, "")), after);
  }

  @Test
  void threads_recording_at_once_lose_nothing_but_the_oldest_and_keep_each_ones_order() throws Exception {
    // setup
    int threads = 4;
    int each = 500;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      // run
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        String backend = "thread-" + t;
        done.add(pool.submit(() -> {
          for (int i = 0; i < each; i++) {
            events.record(ClusterEvent.PROMOTED, backend, i, 0, "");
          }
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    // verify: full, and each thread's events in the order it recorded them
    List<ClusterEvent> kept = events.list();
    assertEquals(ClusterEvents.CAPACITY, kept.size());
    for (int t = 0; t < threads; t++) {
      String backend = "thread-" + t;
      List<Long> mine = kept.stream().filter(e -> e.backendId().equals(backend)).map(ClusterEvent::objects).toList();
      for (int i = 1; i < mine.size(); i++) {
        assertTrue(mine.get(i - 1) < mine.get(i), backend + ": " + mine);
      }
    }
    assertTrue(kept.stream().anyMatch(e -> e.objects() == each - 1), "the last event of some thread is kept");
  }
}
