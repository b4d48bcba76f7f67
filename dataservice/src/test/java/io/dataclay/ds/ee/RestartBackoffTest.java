package io.dataclay.ds.ee;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class RestartBackoffTest {
  @Test
  void delays_double_from_a_tenth_of_a_second_up_to_five_seconds() {
    RestartBackoff b = new RestartBackoff();
    long[] expected = {100, 200, 400, 800, 1600, 3200, 5000, 5000};
    for (long e : expected) {
      assertEquals(e, b.delayAfter(1, 10));
    }
  }

  @Test
  void thirty_seconds_of_health_resets_the_delay() {
    RestartBackoff b = new RestartBackoff();
    b.delayAfter(1, 10);
    b.delayAfter(1, 10);
    assertEquals(100, b.delayAfter(1, 30_000));
    assertEquals(200, b.delayAfter(1, 10));
  }

  @Test
  void exit_code_3_restarts_at_once_unless_it_comes_within_a_second_of_the_start() {
    RestartBackoff b = new RestartBackoff();
    assertEquals(0, b.delayAfter(3, 5_000));
    assertEquals(0, b.delayAfter(3, 5_000));
    assertEquals(100, b.delayAfter(3, 200));
    assertEquals(200, b.delayAfter(1, 5_000));
  }
}
