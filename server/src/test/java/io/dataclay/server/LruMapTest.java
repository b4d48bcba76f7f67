package io.dataclay.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link LruMap} keeps at most its bound, dropping the entry used least recently. */
class LruMapTest {
  @Test
  void past_its_bound_the_least_recently_used_entry_is_dropped() {
    // setup
    LruMap<String, Integer> map = new LruMap<>(2);
    map.put("a", 1);
    map.put("b", 2);
    // run: reading "a" makes "b" the least recently used
    map.get("a");
    map.put("c", 3);
    // verify
    assertEquals(List.of("a", "c"), List.copyOf(map.keySet()));
  }
}
