package io.dataclay.ds.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.ds.TestCluster;
import io.dataclay.ds.TestLogicModule;
import io.dataclay.ds.lm.BackendSession;
import io.dataclay.ds.lm.RemoteLogicModule;
import io.dataclay.proto.BackendInfo;
import io.dataclay.proto.Language;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(60)
class SessionCacheTest {
  @RegisterExtension static final TestCluster cluster = TestCluster.forTheClass();
  static BackendSession admin;
  static SessionCache cache;
  static final AtomicLong now = new AtomicLong(System.currentTimeMillis());

  @BeforeAll
  static void start() throws Exception {
    UUID backend = UUID.randomUUID();
    admin = BackendSession.over(cluster.lmChannel(), TestLogicModule.SECRET, backend);
    // a backend session may validate tokens only once its backend is registered
    admin.client().registerBackend(BackendInfo.newBuilder().setId(backend.toString()).setName("cache-test")
        .setHost("127.0.0.1").setPort(1).setStoreEngine("memory").addLanguages(Language.PYTHON).build());
    cache = new SessionCache(new RemoteLogicModule(admin, backend), now::get);
  }

  @AfterAll
  static void stop() throws Exception {
    admin.close();
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
  void a_revoked_session_is_refused_at_once_and_forget_all_drops_every_session() {
    // setup
    String token = cluster.session("quinn");
    String other = cluster.session("rita");
    cache.resolve(token);
    cache.resolve(other);
    // run
    cache.revoke(java.util.List.of(SessionCache.sha256(token)));
    Session afterRevoke = cache.cached(token);
    Session untouched = cache.cached(other);
    cache.forgetAll();
    // verify
    assertNull(afterRevoke);
    assertEquals("rita", untouched.username());
    assertNull(cache.cached(other));
  }

  @Test
  void a_refused_token_is_refused_again_without_asking_the_logic_module_for_a_while() {
    // setup
    long before = cluster.lmCalls("ValidateSession");
    // run
    for (int i = 0; i < 5; i++) {
      assertThrows(io.dataclay.exceptions.NotAuthenticatedException.class, () -> cache.resolve("dead-token", "p1"));
    }
    long withinRefusal = cluster.lmCalls("ValidateSession") - before;
    now.addAndGet(SessionCache.REFUSAL_MS + 1);
    assertThrows(io.dataclay.exceptions.NotAuthenticatedException.class, () -> cache.resolve("dead-token", "p1"));
    // verify
    assertEquals(1, withinRefusal);
    assertEquals(2, cluster.lmCalls("ValidateSession") - before);
  }

  @Test
  void a_peer_sending_many_unknown_tokens_is_refused_without_asking_the_logic_module() {
    // setup
    String good = cluster.session("sam");
    for (int i = 0; i < 50; i++) {
      String bogus = "bogus-" + i;
      assertThrows(io.dataclay.exceptions.NotAuthenticatedException.class, () -> cache.resolve(bogus, "10.6.6.6"));
    }
    long before = cluster.lmCalls("ValidateSession");
    // run
    io.dataclay.exceptions.NotAuthenticatedException refused = assertThrows(
        io.dataclay.exceptions.NotAuthenticatedException.class, () -> cache.resolve(good, "10.6.6.6"));
    Session elsewhere = cache.resolve(good, "10.0.0.7");
    // verify
    assertTrue(refused.getMessage().contains("10.6.6.6"), refused.getMessage());
    assertEquals("sam", elsewhere.username());
    assertEquals(1, cluster.lmCalls("ValidateSession") - before);
    now.addAndGet(11_000);
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
