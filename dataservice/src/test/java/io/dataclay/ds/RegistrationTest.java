package io.dataclay.ds;

import static io.dataclay.ds.TestObjects.point;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.client.DataServiceClient;
import io.dataclay.ds.servicer.Messages;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.proto.ObjectData;
import io.dataclay.proto.ObjectInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Objects made persistent without an alias reach the Logic Module in the background, and always. */
@Timeout(90)
class RegistrationTest {
  @TempDir Path tmp;
  TestCluster cluster;

  @AfterEach
  void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  private Map<String, String> kvPool() {
    return Map.of("DATACLAY_STORE", "kv", "DATACLAY_STORE_PATH", tmp.resolve("pool").toString());
  }

  @Test
  void objects_made_persistent_without_an_alias_are_found_by_id_as_soon_as_the_call_returns() throws Exception {
    // setup
    cluster = TestCluster.start(tmp);
    DataServiceClient ds = cluster.client(cluster.adminToken());
    List<UUID> ids = new ArrayList<>();
    // run: each lookup comes right after the store answered
    for (int i = 0; i < 200; i++) {
      UUID id = UUID.randomUUID();
      ds.makePersistent(List.of(point(id, "p" + i)), null);
      ObjectInfo info = cluster.adminLm().getObjectInfo(id.toString());
      // verify
      assertEquals(cluster.node().identity().id().toString(), info.getMasterBackendId());
      ids.add(id);
    }
    assertEquals(ids.size(), cluster.adminLm().getStats().getObjects());
  }

  @Test
  void objects_made_persistent_one_by_one_reach_the_logic_module_a_batch_per_call() throws Exception {
    // setup
    cluster = TestCluster.start(tmp);
    DataServiceClient ds = cluster.client(cluster.adminToken());
    long before = cluster.lmCalls("RegisterObjects");
    // run
    for (int i = 0; i < 200; i++) {
      ds.makePersistent(List.of(point(UUID.randomUUID(), "p" + i)), null);
    }
    cluster.client(cluster.backendToken()).flushRegistrations(5_000);
    // verify: every object registered, in far fewer Logic Module calls than objects
    assertEquals(200, cluster.adminLm().getStats().getObjects());
    long calls = cluster.lmCalls("RegisterObjects") - before;
    assertTrue(calls <= 100, calls + " RegisterObjects calls for 200 objects");
  }

  @Test
  void an_object_made_persistent_after_the_registrar_went_idle_is_registered_without_a_flush() throws Exception {
    // setup: one object registered, then the registrar has nothing queued
    cluster = TestCluster.start(tmp);
    DataServiceClient ds = cluster.client(cluster.adminToken());
    ds.makePersistent(List.of(point(UUID.randomUUID(), "first")), null);
    cluster.client(cluster.backendToken()).flushRegistrations(5_000);
    Thread.sleep(100);
    // run
    ds.makePersistent(List.of(point(UUID.randomUUID(), "second")), null);
    // verify: it reaches the Logic Module on its own (GetStats asks no backend to flush)
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (cluster.adminLm().getStats().getObjects() < 2 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertEquals(2, cluster.adminLm().getStats().getObjects());
  }

  @Test
  void only_the_logic_module_may_flush_registrations() throws Exception {
    cluster = TestCluster.start(tmp);
    DataServiceClient user = cluster.client(cluster.session("mallory"));
    assertThrows(PermissionDeniedException.class, () -> user.flushRegistrations(5_000));
    assertThrows(PermissionDeniedException.class, () -> cluster.client(cluster.adminToken()).flushRegistrations(5_000));
    cluster.client(cluster.backendToken()).flushRegistrations(5_000);
  }

  @Test
  void a_clean_stop_leaves_its_mark_and_the_next_start_consumes_it() throws Exception {
    cluster = TestCluster.withLogicModule(tmp).startDataService(kvPool());
    cluster.client(cluster.adminToken()).makePersistent(List.of(point(UUID.randomUUID(), "x")), null);
    Path mark = cluster.backendDir().resolve("stopped-cleanly");
    cluster.stopDataService();
    assertTrue(Files.exists(mark));
    cluster.restartDataService(kvPool());
    assertFalse(Files.exists(mark), "a running backend must not look cleanly stopped");
  }

  @Test
  void objects_stored_but_never_registered_are_registered_at_the_start_after_an_unclean_stop() throws Exception {
    // setup: an object in the pool that the Logic Module never heard of, as a crash between the
    // store and the registration leaves it
    cluster = TestCluster.withLogicModule(tmp).startDataService(kvPool());
    UUID orphan = UUID.randomUUID();
    ObjectData data = point(orphan, "orphan").toBuilder()
        .setHeader(point(orphan, "orphan").getHeader().toBuilder().setDataset(TestCluster.ADMIN)).build();
    cluster.store().put(Messages.storedObject(data, "orphan"));
    assertThrows(ObjectDoesNotExistException.class, () -> cluster.adminLm().getObjectInfo(orphan.toString()));
    cluster.stopDataService();
    Files.delete(cluster.backendDir().resolve("stopped-cleanly"));
    // run
    cluster.restartDataService(kvPool());
    // verify
    ObjectInfo info = cluster.adminLm().getObjectInfo(orphan.toString());
    assertEquals(cluster.node().identity().id().toString(), info.getMasterBackendId());
    assertEquals(TestCluster.ADMIN, info.getDataset());
  }
}
