package io.dataclay.logic.failover;

import io.dataclay.common.Language;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.backends.BackendCalls;
import io.dataclay.logic.backends.RecordedRoots;
import io.dataclay.logic.events.ClusterEvent;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.FailoverStore.Move;
import io.dataclay.logic.metadata.ModelRecord;
import io.dataclay.logic.metadata.ObjectRecord;
import io.dataclay.testing.LogicModuleFixture;
import io.dataclay.testing.TestClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;


/**
 * The Logic Module's failover decisions, on a test clock: when a silent backend's replicas are
 * promoted (and when not), what the new master is told, what the old master's heartbeats answer,
 * and who may change an object's copies. The whole path with real backends, partitions and writers
 * is tests/test_failover.py.
 */
@Timeout(60)
class FailoverTest {
  private static final long GRACE_MS = 6_000;

  @TempDir
  Path dir;
  private final Recorded calls = new Recorded();
  private LogicModuleFixture lm;
  private String master;
  private String first;
  private String second;
  private String object;

  @BeforeEach
  void start() {
    lm = new LogicModuleFixture("jdbc:sqlite:" + dir.resolve("metadata.db"), new TestClock(), calls, GRACE_MS);
    master = lm.backend(7001);
    first = lm.backend(7002);
    second = lm.backend(7003);
    object = UUID.randomUUID().toString();
    lm.register(lm.backendSession(master), List.of(new ObjectRecord(object, "app.Person",
        Language.PYTHON, "admin", master, List.of(first, second), List.of(), "")), "", "");
  }

  @AfterEach
  void stop() {
    lm.close();
  }

  /** The backends in {@code ids} heartbeat every second for {@code seconds}, then one round runs. */
  private void heard(long seconds, String... ids) {
    for (long s = 0; s < seconds; s++) {
      lm.clock.advance(Duration.ofSeconds(1));
      for (String id : ids) {
        lm.service.heartbeat(lm.backendSession(id), id, 0, 0, List.of());
      }
    }
    lm.service.failover().tick();
  }

  private String masterOf(String id) {
    return lm.store.objects().find(id).orElseThrow().masterBackendId();
  }

  @Test
  void a_backend_silent_for_the_grace_period_has_one_live_replica_promoted_and_the_new_master_told() {
    // run: the master stops heartbeating; its replicas go on
    heard(GRACE_MS / 1000 - 1, first, second);
    String before = masterOf(object);
    heard(2, first, second);
    // verify
    assertEquals(master, before, "not promoted within the grace period");
    String promoted = masterOf(object);
    String follower = promoted.equals(first) ? second : first;
    assertTrue(promoted.equals(first) || promoted.equals(second));
    assertEquals(List.of(follower), lm.store.objects().find(object).orElseThrow().replicaBackendIds());
    assertEquals(Map.of(master, 1L), lm.store.failover().terms());
    assertEquals(Map.of(object, List.of(follower)), calls.promotedOn(promoted), "told with its follower");
    assertTrue(calls.termsAnnounced().containsAll(List.of(first, second)), "terms reach every live backend first");
    assertEquals(List.of(), lm.store.failover().pendingPromotions(), "the new master confirmed");
  }

  @Test
  void a_logic_module_that_heard_nobody_promotes_nothing_until_it_heard_the_others_for_the_grace_period() {
    // run: nobody is heard for twice the grace period (this Logic Module was cut off), then only
    // the replicas come back
    lm.clock.advance(Duration.ofMillis(2 * GRACE_MS));
    lm.service.failover().tick();
    String whileAlone = masterOf(object);
    heard(2, first, second);
    String justAfter = masterOf(object);
    heard(GRACE_MS / 1000, first, second);
    // verify
    assertEquals(master, whileAlone);
    assertEquals(master, justAfter, "silence is counted from when the Logic Module hears the others again");
    assertFalse(masterOf(object).equals(master), "then the silent master's replica is promoted");
  }

  @Test
  void the_old_master_hears_its_demotions_before_its_lease_and_then_rejoins_as_a_replica() throws Exception {
    // setup
    heard(GRACE_MS / 1000 + 1, first, second);
    String promoted = masterOf(object);
    String token = lm.backendSession(master);
    // run: the old master is heard again, drops its copy, and says so
    var back = lm.service.heartbeat(token, master, 0, 0, List.of()).failover();
    var acknowledged = lm.service.heartbeat(token, master, 0, 0, List.of(object)).failover();
    // verify
    assertEquals(List.of(new Move(object, promoted)), back.demotions());
    assertEquals(1L, back.terms().get(master));
    assertTrue(back.leaseMs() > 0 && back.leaseMs() < GRACE_MS, "the lease ends before a promotion can happen");
    assertEquals(List.of(), acknowledged.demotions());
    assertEquals(List.of(promoted + " " + object + " -> " + master), calls.awaitReplicas(1));
  }

  @Test
  void a_rejoin_the_master_could_not_make_is_tried_again_after_the_next_heartbeat() throws Exception {
    // setup: the old master dropped its copy, but the new master cannot be reached just then
    heard(GRACE_MS / 1000 + 1, first, second);
    String promoted = masterOf(object);
    String token = lm.backendSession(master);
    lm.service.heartbeat(token, master, 0, 0, List.of());
    calls.failReplicas(1);
    // run
    lm.service.heartbeat(token, master, 0, 0, List.of(object));
    for (int i = 0; i < 500 && lm.store.failover().demotions(master, 10).isEmpty(); i++) {
      Thread.sleep(10); // the rejoin runs on the Logic Module's own thread
    }
    var again = lm.service.heartbeat(token, master, 0, 0, List.of()).failover();
    lm.service.heartbeat(token, master, 0, 0, List.of(object));
    // verify
    assertEquals(List.of(new Move(object, promoted)), again.demotions(), "the demotion is back, to acknowledge");
    assertEquals(List.of(promoted + " " + object + " -> " + master), calls.awaitReplicas(1));
  }

  private List<ClusterEvent> eventsOf(String backend) {
    return lm.service.stats(lm.adminToken).events().stream().filter(e -> e.backendId().equals(backend)).toList();
  }

  @Test
  void a_lost_masters_silence_promotion_return_and_rejoin_are_one_cluster_event_each() throws Exception {
    // run: the master is silent for several rounds past the grace period, then heard again, and rejoins
    heard(GRACE_MS / 1000 + 1, first, second);
    long promotedAt = lm.clock.millis();
    heard(1, first, second);
    heard(1, first, second);
    String token = lm.backendSession(master);
    lm.service.heartbeat(token, master, 0, 0, List.of());
    lm.service.heartbeat(token, master, 0, 0, List.of(object));
    calls.awaitReplicas(1);
    List<ClusterEvent> events = eventsOf(master);
    for (int i = 0; i < 500 && events.size() < 4; i++) {
      Thread.sleep(10); // the rejoin runs on the Logic Module's own thread
      events = eventsOf(master);
    }
    // verify
    assertEquals(List.of(ClusterEvent.BACKEND_SILENT, ClusterEvent.PROMOTED, ClusterEvent.BACKEND_BACK,
        ClusterEvent.REPLICAS_RESTORED), events.stream().map(ClusterEvent::kind).toList());
    ClusterEvent promoted = events.get(1);
    assertEquals(1, promoted.objects());
    assertEquals(1, promoted.term());
    assertEquals(promotedAt, promoted.atMs());
    assertEquals(1, events.get(3).objects());
    assertTrue(events.stream().allMatch(e -> e.detail().startsWith("backend-7001")), events.toString());
    assertTrue(eventsOf(first).isEmpty() && eventsOf(second).isEmpty(), "the replicas were heard all along");
  }

  @Test
  void only_an_objects_master_may_drop_add_or_move_its_copies() {
    // setup
    String token = lm.backendSession(first);
    // run / verify: a replica's backend is refused, and nothing changes
    assertThrows(PermissionDeniedException.class, () -> lm.service.removeReplicas(token, List.of(object), second));
    assertThrows(PermissionDeniedException.class, () -> lm.service.addReplicas(token, List.of(object), first));
    assertThrows(PermissionDeniedException.class, () -> lm.service.setMaster(token, List.of(object), first));
    assertEquals(master, masterOf(object));
    assertEquals(List.of(first, second).stream().sorted().toList(),
        lm.store.objects().find(object).orElseThrow().replicaBackendIds());
    // the master drops a replica that missed a change: that backend is told to drop its copy
    lm.service.removeReplicas(lm.backendSession(master), List.of(object), second);
    assertEquals(List.of(new Move(object, master)),
        lm.service.heartbeat(lm.backendSession(second), second, 0, 0, List.of()).failover().demotions());
  }

  /** BackendCalls that records what failover asks of backends (every call succeeds). */
  private static final class Recorded implements BackendCalls {
    private final List<String> announced = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, Map<String, List<String>>> promoted = new java.util.concurrent.ConcurrentHashMap<>();
    private final List<String> replicas = Collections.synchronizedList(new ArrayList<>());
    private final java.util.concurrent.atomic.AtomicInteger toFail = new java.util.concurrent.atomic.AtomicInteger();

    @Override
    public void promoteReplicas(BackendRecord b, Map<String, List<String>> objects, Map<String, Long> terms,
        String token) {
      if (objects.isEmpty()) {
        announced.add(b.id());
      } else {
        promoted.computeIfAbsent(b.id(), k -> new java.util.concurrent.ConcurrentHashMap<>()).putAll(objects);
      }
    }

    @Override
    public void newReplicas(BackendRecord master, List<String> ids, String target, String token) {
      if (toFail.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        throw new io.dataclay.exceptions.BackendUnavailableException("the master is away for a moment");
      }
      ids.forEach(id -> replicas.add(master.id() + " " + id + " -> " + target));
    }

    void failReplicas(int n) {
      toFail.set(n);
    }


    Map<String, List<String>> promotedOn(String backend) {
      return promoted.getOrDefault(backend, Map.of());
    }

    List<String> termsAnnounced() {
      return List.copyOf(announced);
    }

    List<String> awaitReplicas(int n) throws InterruptedException {
      for (int i = 0; i < 500 && replicas.size() < n; i++) {
        Thread.sleep(10);
      }
      return List.copyOf(replicas);
    }

    @Override
    public List<BackendRecord> deploy(List<BackendRecord> backends, ModelRecord model, String token, Duration wait) {
      return List.of();
    }

    @Override
    public List<BackendRecord> removeModels(List<BackendRecord> backends, List<String> namespaces, long revision,
        String token, Duration wait) {
      return List.of();
    }

    @Override
    public void sessionsClosed(List<BackendRecord> backends, List<String> tokenSha256, boolean forgetAll,
        String token, Duration wait) {}

    @Override
    public void beginCollection(BackendRecord backend, long collectionId, String token) {}

    @Override
    public void getReferences(BackendRecord backend, long collectionId, String token, ReferenceSink sink) {}

    @Override
    public RecordedRoots endCollection(BackendRecord backend, long collectionId, String token) {
      return new RecordedRoots(List.of(), Map.of());
    }

    @Override
    public void deleteObjects(BackendRecord backend, List<String> ids, String token) {}

    @Override
    public void close() {}
  }
}
