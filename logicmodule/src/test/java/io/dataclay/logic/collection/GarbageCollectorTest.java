package io.dataclay.logic.collection;

import io.dataclay.common.Language;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.events.ClusterEvent;
import io.dataclay.logic.metadata.ObjectRecord;
import io.dataclay.testing.LogicModuleFixture;
import io.dataclay.testing.SqliteLogicModule;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Logic Module's side of garbage collection against backends that cannot take part (the
 * collection with real backends is tested in dataservice's GarbageCollectionTest and tests/test_gc.py).
 */
@Timeout(60)
class GarbageCollectorTest {
  @RegisterExtension
  final SqliteLogicModule sqlite = new SqliteLogicModule();
  /** This test's Logic Module, set by {@link #sqlite} before each test. */
  private LogicModuleFixture lm;

  private static int unusedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private List<String> unreferencedObjectsOn(String backend, int n) {
    List<ObjectRecord> objects = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      objects.add(new ObjectRecord(UUID.randomUUID().toString(), "app.Person", Language.PYTHON, "admin", backend,
          List.of(), List.of(), ""));
    }
    lm.register(lm.backendToken, objects, "", "");
    return objects.stream().map(ObjectRecord::id).toList();
  }

  @Test
  void nothing_is_collected_while_a_backend_holding_objects_is_down() throws IOException {
    // setup
    String backend = lm.backend(unusedPort());
    unreferencedObjectsOn(backend, 3);
    lm.clock.advance(Duration.ofMillis(LogicModuleFixture.BACKEND_TIMEOUT_MS + 1));
    // run
    BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
        () -> lm.service.collectGarbage(lm.adminToken));
    // verify
    assertTrue(e.getMessage().contains("nothing collected") && e.getMessage().contains(backend), e.getMessage());
    assertEquals(3, lm.store.objects().countObjects());
    assertEquals(0, lm.service.stats(lm.adminToken).objectsCollected());
  }

  @Test
  void nothing_is_collected_when_a_live_backend_does_not_answer() throws IOException {
    // setup: registered and heartbeating as far as the Logic Module knows, but nobody listens there
    String backend = lm.backend(unusedPort());
    List<String> ids = unreferencedObjectsOn(backend, 2);
    // run
    BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
        () -> lm.service.collectGarbage(lm.adminToken));
    // verify
    assertTrue(e.getMessage().contains("abandoned, nothing collected"), e.getMessage());
    assertTrue(lm.store.objects().find(ids.get(0)).isPresent());
    assertEquals(2, lm.store.objects().countObjects());
  }

  @Test
  void a_collection_without_backends_or_objects_examines_nothing() {
    // run
    CollectionResult result = lm.service.collectGarbage(lm.adminToken);
    // verify
    assertEquals(0, result.collected());
    assertEquals(0, result.examined());
  }

  @Test
  void each_collection_that_runs_is_a_gc_event_saying_who_ran_it_and_an_abandoned_one_is_not() throws IOException {
    // setup
    long before = lm.clock.millis();
    lm.service.collectGarbage(lm.adminToken);
    lm.clock.advance(Duration.ofSeconds(1));
    lm.service.collectGarbageNow();
    String backend = lm.backend(unusedPort());
    unreferencedObjectsOn(backend, 1);
    // run: the backend holding the object does not answer
    assertThrows(BackendUnavailableException.class, () -> lm.service.collectGarbage(lm.adminToken));
    List<ClusterEvent> gcs = lm.service.stats(lm.adminToken).events().stream()
        .filter(e -> e.kind().equals(ClusterEvent.GC)).toList();
    // verify
    assertEquals(2, gcs.size(), gcs.toString());
    assertEquals(before, gcs.get(0).atMs());
    assertEquals(before + 1000, gcs.get(1).atMs());
    assertTrue(gcs.get(0).detail().startsWith("examined 0 ") && gcs.get(0).detail().endsWith("(admin)"),
        gcs.get(0).detail());
    assertTrue(gcs.get(1).detail().endsWith("(periodic)"), gcs.get(1).detail());
    assertEquals(0, gcs.get(1).objects());
    assertEquals("", gcs.get(1).backendId());
  }

  @Test
  void only_administrators_may_collect_garbage() {
    // setup
    String alice = lm.user("alice");
    // verify
    PermissionDeniedException e = assertThrows(PermissionDeniedException.class, () -> lm.service.collectGarbage(alice));
    assertTrue(e.getMessage().contains("CollectGarbage"), e.getMessage());
  }
}
