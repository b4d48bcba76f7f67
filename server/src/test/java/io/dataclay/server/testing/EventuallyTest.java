package io.dataclay.server.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class EventuallyTest {
  @Test
  void a_condition_that_comes_true_is_waited_for() throws InterruptedException {
    AtomicInteger polls = new AtomicInteger();
    Eventually.await(Duration.ofSeconds(10), () -> polls.incrementAndGet() >= 3, "the third poll");
    assertEquals(3, polls.get());
  }

  @Test
  void a_condition_that_never_comes_true_fails_naming_what_was_awaited_after_the_limit() {
    long started = System.nanoTime();
    AssertionError e = assertThrows(AssertionError.class,
        () -> Eventually.await(Duration.ofMillis(100), () -> false, "the moon"));
    assertTrue(e.getMessage().contains("the moon"), e.getMessage());
    assertTrue(System.nanoTime() - started >= 100_000_000L);
  }

  @Test
  void a_value_is_returned_once_the_probe_has_it() throws InterruptedException {
    AtomicInteger polls = new AtomicInteger();
    assertEquals("x", Eventually.await(Duration.ofSeconds(10),
        () -> polls.incrementAndGet() < 2 ? Optional.empty() : Optional.of("x"), () -> "x"));
  }

  @Test
  void a_probe_that_throws_fails_at_once_with_its_cause() {
    AssertionError e = assertThrows(AssertionError.class, () -> Eventually.await(Duration.ofSeconds(10), () -> {
      throw new IOException("unreadable");
    }, "a file"));
    assertTrue(e.getCause() instanceof IOException);
  }

  @Test
  void within_says_whether_the_condition_held_in_time_without_failing() throws InterruptedException {
    assertFalse(Eventually.within(Duration.ofMillis(50), () -> false));
    assertTrue(Eventually.within(Duration.ofMillis(50), () -> true));
  }
}
