package io.dataclay.logic.accounts;

import io.dataclay.exceptions.QuotaExceededException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;


@Timeout(30)
class SessionQuotaTest {
  private final AtomicLong now = new AtomicLong(1_000_000);

  @Test
  void an_account_at_its_open_sessions_limit_is_refused_naming_the_setting() {
    // setup
    SessionQuota quota = new SessionQuota(new SessionLimits(3, 100, 100), now::get);
    quota.admit("bob", 2);
    // run
    QuotaExceededException e = assertThrows(QuotaExceededException.class, () -> quota.admit("bob", 3));
    // verify
    assertTrue(e.getMessage().contains("DATACLAY_MAX_SESSIONS_PER_ACCOUNT"), e.getMessage());
    assertTrue(e.getMessage().contains("3 open sessions"), e.getMessage());
  }

  @Test
  void a_burst_passes_then_new_sessions_come_at_the_configured_rate_per_account() {
    // setup
    SessionQuota quota = new SessionQuota(new SessionLimits(1000, 2, 5), now::get);
    for (int i = 0; i < 5; i++) {
      quota.admit("bob", 0);
    }
    // run
    QuotaExceededException e = assertThrows(QuotaExceededException.class, () -> quota.admit("bob", 0));
    quota.admit("alice", 0);
    now.addAndGet(500);
    quota.admit("bob", 0);
    // verify
    assertTrue(e.getMessage().contains("DATACLAY_SESSIONS_PER_SECOND"), e.getMessage());
    assertThrows(QuotaExceededException.class, () -> quota.admit("bob", 0));
  }
}
