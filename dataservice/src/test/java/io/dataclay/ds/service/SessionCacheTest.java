package io.dataclay.ds.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.dataclay.ds.TestCluster;
import io.dataclay.ds.lm.AdminSession;
import io.dataclay.ds.lm.RemoteLogicModule;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class SessionCacheTest {
  @TempDir static Path tmp;
  static TestCluster cluster;
  static AdminSession admin;
  static SessionCache cache;
  static final AtomicLong now = new AtomicLong(System.currentTimeMillis());

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.withLogicModule(tmp);
    admin = AdminSession.over(cluster.lmChannel(), TestCluster.ADMIN, TestCluster.ADMIN_PASSWORD);
    cache = new SessionCache(new RemoteLogicModule(admin, UUID.randomUUID()), now::get);
  }

  @AfterAll
  static void stop() throws Exception {
    admin.close();
    cluster.close();
  }

  @Test
  void a_session_is_trusted_for_sixty_seconds_then_validated_again() {
    // setup
    String token = cluster.session("olga");
    long before = cluster.lmCalls("ValidateSession");
    // run
    Session first = cache.resolve(token);
    now.addAndGet(59_000);
    cache.resolve(token);
    long withinMinute = cluster.lmCalls("ValidateSession") - before;
    now.addAndGet(2_000);
    Session again = cache.resolve(token);
    // verify
    assertEquals(1, withinMinute);
    assertEquals(2, cluster.lmCalls("ValidateSession") - before);
    assertEquals("olga", first.username());
    assertEquals("olga", again.dataset());
    assertEquals(token, again.token());
  }

  @Test
  void cached_answers_only_sessions_validated_and_still_trusted_without_asking_the_logic_module() {
    // setup
    String token = cluster.session("pablo");
    long before = cluster.lmCalls("ValidateSession");
    // run
    Session beforeValidation = cache.cached(token);
    cache.resolve(token);
    Session trusted = cache.cached(token);
    now.addAndGet(SessionCache.TRUST_MS + 1);
    Session stale = cache.cached(token);
    // verify
    assertNull(beforeValidation);
    assertEquals("pablo", trusted.username());
    assertNull(stale);
    assertNull(cache.cached(null));
    assertNull(cache.cached("no-such-token"));
    assertEquals(1, cluster.lmCalls("ValidateSession") - before);
  }
}
