package io.dataclay.ds.registration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.Language;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.server.testing.Eventually;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Re-registration after an unclean stop, against a Logic Module stand-in. */
@Timeout(30)
class ReconciliationTest {
  private final FakeLogicModule lm = new FakeLogicModule();
  private final ObjectStore store = ObjectStores.open(new StoreConfig("memory", null, 16 << 20));
  private final GroupCommitRegistrar registrar = new GroupCommitRegistrar(lm);

  @AfterEach
  void stop() {
    lm.release.countDown();
    registrar.close(Duration.ofSeconds(5));
    store.close();
  }

  private static StoredObject object() {
    return new StoredObject(UUID.randomUUID(), ObjectHeader.of("app.Point", Language.PYTHON, "ann"), Map.of());
  }

  @Test
  void every_master_copy_is_registered_alone_and_those_registered_as_other_objects_are_removed() throws Exception {
    // setup: three master copies (one whose ID the Logic Module has as another object) and a
    // replica; the Logic Module is down for the first request
    lm.release.countDown();
    StoredObject kept = object();
    StoredObject alsoKept = object();
    StoredObject clash = object();
    StoredObject replica = new StoredObject(UUID.randomUUID(), new ObjectHeader("app.Point", Language.PYTHON, "ann",
        null, UUID.randomUUID().toString()), Map.of());
    store.putAll(List.of(kept, alsoKept, clash, replica));
    lm.refused.add(clash.id());
    lm.unavailable.set(1);
    Set<UUID> evicted = ConcurrentHashMap.newKeySet();
    // run
    Reconciliation r = Reconciliation.start(store, registrar, evicted::addAll);
    Eventually.await(Duration.ofSeconds(10), r::finished, "the reconciliation to finish");
    // verify: registered one group per object, replicas left to their master; the clash is gone
    assertTrue(r.finished());
    assertEquals(Set.of(clash.id()), evicted);
    assertTrue(store.header(kept.id()).isPresent() && store.header(alsoKept.id()).isPresent());
    assertFalse(store.header(clash.id()).isPresent());
    assertTrue(store.header(replica.id()).isPresent());
    Set<UUID> sent = ConcurrentHashMap.newKeySet();
    lm.requests.forEach(req -> req.forEach(g -> g.objects().forEach(o -> sent.add(o.id()))));
    assertEquals(Set.of(kept.id(), alsoKept.id(), clash.id()), sent);
    assertTrue(lm.requests.stream().allMatch(req -> req.stream().allMatch(g -> g.objects().size() == 1)));
  }

  @Test
  void a_reconciliation_stopped_before_the_logic_module_answered_is_not_finished_and_removes_nothing()
      throws Exception {
    // setup: the Logic Module never answers
    StoredObject clash = object();
    store.put(clash);
    lm.refused.add(clash.id());
    lm.unavailable.set(Integer.MAX_VALUE);
    Reconciliation r = Reconciliation.start(store, registrar, ids -> { });
    assertTrue(lm.arrived.await(5, TimeUnit.SECONDS));
    // run
    r.stop();
    lm.release.countDown();
    Thread.sleep(1_500);
    // verify
    assertFalse(r.finished());
    assertTrue(store.header(clash.id()).isPresent());
  }
}
