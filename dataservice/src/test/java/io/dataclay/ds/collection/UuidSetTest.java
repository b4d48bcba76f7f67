package io.dataclay.ds.collection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class UuidSetTest {
  @Test
  void a_set_grown_to_many_ids_holds_each_once_including_the_zero_id() {
    // setup
    Set<UUID> expected = new HashSet<>();
    UuidSet set = new UuidSet();
    // run
    for (int i = 0; i < 100_000; i++) {
      UUID id = i == 0 ? new UUID(0, 0) : UUID.randomUUID();
      expected.add(id);
      assertTrue(set.add(id));
      assertFalse(set.add(id));
    }
    // verify
    Set<UUID> seen = new HashSet<>();
    set.forEach(seen::add);
    assertEquals(100_000, set.size());
    assertEquals(expected, seen);
  }
}
