package io.dataclay.logic.backends;

import io.dataclay.common.Language;
import io.dataclay.exceptions.BackendDoesNotExistException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.logic.events.ClusterEvent;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.testing.LogicModuleFixture;
import io.dataclay.testing.SqliteLogicModule;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class BackendRulesTest {
  private static final Duration PAST_TIMEOUT = Duration.ofMillis(LogicModuleFixture.BACKEND_TIMEOUT_MS + 1);

  @RegisterExtension
  final SqliteLogicModule sqlite = new SqliteLogicModule();
  /** This test's Logic Module, set by {@link #sqlite} before each test. */
  private LogicModuleFixture lm;

  private boolean alive(String id) {
    return lm.service.getBackends(lm.adminToken).stream().filter(b -> b.backend().id().equals(id)).findFirst()
        .orElseThrow().alive();
  }

  @Test
  void a_backend_is_alive_while_it_heartbeats_within_the_window() {
    // setup
    String id = lm.backend(7001);
    assertTrue(alive(id));
    // run
    lm.clock.advance(PAST_TIMEOUT);
    boolean afterSilence = alive(id);
    lm.service.heartbeat(lm.backendSession(id), id, 0, 0, List.of());
    // verify
    assertFalse(afterSilence);
    assertTrue(alive(id));
  }

  private List<String> eventsOf(String id) {
    return lm.service.stats(lm.adminToken).events().stream().filter(e -> e.backendId().equals(id))
        .map(ClusterEvent::kind).toList();
  }

  @Test
  void a_backend_going_silent_and_coming_back_is_one_event_each_time_however_many_rounds_see_it() {
    // setup: promotion is off in this fixture, but its rounds still watch liveness
    String id = lm.backend(7001);
    // run
    lm.clock.advance(PAST_TIMEOUT);
    long silentAt = lm.clock.millis();
    lm.service.failover().tick();
    lm.clock.advance(Duration.ofSeconds(1));
    lm.service.failover().tick();
    List<String> whileSilent = eventsOf(id);
    lm.service.heartbeat(lm.backendSession(id), id, 0, 0, List.of());
    lm.service.heartbeat(lm.backendSession(id), id, 0, 0, List.of());
    List<String> whenBack = eventsOf(id);
    lm.clock.advance(PAST_TIMEOUT);
    // verify (GetStats itself looks at liveness too)
    assertEquals(List.of(ClusterEvent.BACKEND_SILENT), whileSilent);
    assertEquals(List.of(ClusterEvent.BACKEND_SILENT, ClusterEvent.BACKEND_BACK), whenBack);
    assertEquals(List.of(ClusterEvent.BACKEND_SILENT, ClusterEvent.BACKEND_BACK, ClusterEvent.BACKEND_SILENT),
        eventsOf(id));
    ClusterEvent silent = lm.service.stats(lm.adminToken).events().stream().filter(e -> e.backendId().equals(id))
        .findFirst().orElseThrow();
    assertEquals(silentAt, silent.atMs());
    assertTrue(silent.detail().startsWith("backend-7001: no heartbeat for "), silent.detail());
  }

  @Test
  void re_registering_a_backend_id_updates_its_address() {
    // setup
    String id = lm.backend(7001);
    // run
    lm.service.registerBackend(lm.backendSession(id), new BackendRecord(id, "backend-7001", "127.0.0.1", 7555,
        List.of(Language.PYTHON, Language.JAVA), "heap"));
    // verify
    List<RegisteredBackend> all = lm.service.getBackends(lm.adminToken).stream()
        .filter(r -> r.backend().id().equals(id)).toList();
    assertEquals(1, all.size());
    assertEquals(7555, all.get(0).backend().port());
    assertEquals("heap", all.get(0).backend().storeEngine());
  }

  @Test
  void after_a_restart_backends_are_listed_and_alive_again_at_their_next_heartbeat() {
    // setup
    String id = lm.backend(7001);
    // run
    lm = sqlite.restart();
    boolean aliveBeforeHeartbeat = alive(id);
    lm.service.heartbeat(lm.backendSession(id), id, 0, 0, List.of());
    // verify
    assertFalse(aliveBeforeHeartbeat);
    assertTrue(alive(id));
  }

  @Test
  void a_heartbeat_of_an_unknown_backend_is_refused() {
    String id = UUID.randomUUID().toString();
    String token = lm.backendSession(id);
    assertThrows(BackendDoesNotExistException.class, () -> lm.service.heartbeat(token, id, 0, 0, List.of()));
  }

  @Test
  void malformed_backends_are_refused_naming_the_field() {
    String id = UUID.randomUUID().toString();
    List<BackendRecord> bad = List.of(
        new BackendRecord("not-a-uuid", "b", "h", 1, List.of(Language.JAVA), "kv"),
        new BackendRecord(id.toUpperCase(), "b", "h", 1, List.of(Language.JAVA), "kv"),
        new BackendRecord(id, "", "h", 1, List.of(Language.JAVA), "kv"),
        new BackendRecord(id, "b", "bad host", 1, List.of(Language.JAVA), "kv"),
        // found by the fuzzer: accepted, then every channel to it failed with IllegalArgumentException
        new BackendRecord(id, "b", "friend_names", 1, List.of(Language.JAVA), "kv"),
        new BackendRecord(id, "b", "-node", 1, List.of(Language.JAVA), "kv"),
        new BackendRecord(id, "b", "[::1", 1, List.of(Language.JAVA), "kv"),
        new BackendRecord(id, "b", "1:2:3", 1, List.of(Language.JAVA), "kv"),
        new BackendRecord(id, "b", "h", 0, List.of(Language.JAVA), "kv"),
        new BackendRecord(id, "b", "h", 65536, List.of(Language.JAVA), "kv"),
        new BackendRecord(id, "b", "h", 1, List.of(), "kv"),
        new BackendRecord(id, "b", "h", 1, List.of(Language.JAVA), ""));
    List<String> fields = List.of("id:", "id:", "name:", "host:", "host:", "host:", "host:", "host:", "port:", "port:", "languages:", "store_engine:");
    String token = lm.backendSession(id);
    for (int i = 0; i < bad.size(); i++) {
      BackendRecord b = bad.get(i);
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
          () -> lm.service.registerBackend(token, b));
      assertTrue(e.getMessage().startsWith(fields.get(i)), e.getMessage());
    }
    assertEquals(List.of(lm.backendId),
        lm.service.getBackends(lm.adminToken).stream().map(r -> r.backend().id()).toList());
  }

  @Test
  void host_names_and_ip_addresses_of_every_form_are_accepted() {
    String id = UUID.randomUUID().toString();
    String token = lm.backendSession(id);
    for (String host : List.of("node-1.cluster.local", "h", "10.0.0.9", "::1", "[::1]", "fe80::1%eth0")) {
      lm.service.registerBackend(token, new BackendRecord(id, "b", host, 7001, List.of(Language.JAVA), "kv"));
      assertEquals(host, lm.service.getBackends(lm.adminToken).get(0).backend().host());
    }
  }
}
