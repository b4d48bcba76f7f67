package io.dataclay.ds.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class MastershipTest {
  private final UUID self = UUID.randomUUID();
  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final Mastership mastership = new Mastership(self, now::get);

  @Test
  void no_lease_before_the_first_answer_and_none_past_its_end_counted_from_the_heartbeats_sending() {
    // setup
    boolean before = mastership.leaseValid();
    long sent = now.get();
    now.addAndGet(300_000_000L); // the answer arrives 0.3 s later
    // run
    mastership.heard(sent, 1000, Map.of(), true);
    boolean during = mastership.leaseValid();
    now.set(sent + 999_000_000L);
    boolean lastMoment = mastership.leaseValid();
    now.set(sent + 1_000_000_000L);
    // verify
    assertFalse(before);
    assertTrue(during);
    assertTrue(lastMoment);
    assertFalse(mastership.leaseValid(), "the lease runs from the sending, not the answer");
    assertThrows(BackendUnavailableException.class, () -> mastership.requireLease(UUID.randomUUID()));
  }

  @Test
  void an_answer_with_demotions_pending_renews_no_lease_and_a_logic_module_that_never_promotes_needs_none() {
    // run
    mastership.heard(now.get(), 1000, Map.of(), false);
    boolean pending = mastership.leaseValid();
    mastership.heard(now.get(), 0, Map.of(), true);
    now.addAndGet(3_600_000_000_000L);
    // verify
    assertFalse(pending);
    assertTrue(mastership.leaseValid());
  }

  @Test
  void a_change_stamped_with_an_older_term_than_known_is_refused_and_terms_never_go_back() {
    // setup
    String other = UUID.randomUUID().toString();
    mastership.learn(Map.of(other, 2L, self.toString(), 1L));
    // run: an older answer cannot lower a term
    mastership.heard(now.get(), 1000, Map.of(other, 1L), true);
    // verify
    assertEquals(1L, mastership.ownTerm());
    assertThrows(PermissionDeniedException.class, () -> mastership.requireCurrent(other, 1));
    mastership.requireCurrent(other, 2);
    mastership.requireCurrent(other, 3);
    mastership.requireCurrent(UUID.randomUUID().toString(), 0);
  }
}
