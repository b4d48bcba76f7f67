package io.dataclay.ds;

import static io.dataclay.ds.TestObjects.point;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.api.StoredObject;
import io.dataclay.client.DataServiceClient;
import io.dataclay.ds.codec.Messages;
import io.dataclay.exceptions.ObjectAlreadyExistsException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.proto.DataServiceMessage;
import io.dataclay.proto.ExecuteRequest;
import io.dataclay.proto.ExecuteResult;
import io.dataclay.proto.Language;
import io.dataclay.proto.ObjectData;
import io.dataclay.proto.ObjectInfo;
import io.dataclay.server.testing.Eventually;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** A make_persistent is acknowledged only once the Logic Module registered its objects. */
@Timeout(90)
class RegistrationTest {
  @TempDir Path tmp;
  @RegisterExtension final TestCluster cluster = TestCluster.forEachTest();

  private Map<String, String> kvPool() {
    return Map.of("DATACLAY_STORE", "kv", "DATACLAY_STORE_PATH", tmp.resolve("pool").toString());
  }

  // Registers {@code id} directly with the Logic Module, as this backend's object of another class.
  private void registerElsewhere(UUID id) {
    cluster.lmAs(cluster.backendToken()).registerObjects(List.of(ObjectInfo.newBuilder().setId(id.toString())
        .setClassName("shapes.Other").setLanguage(Language.PYTHON).setDataset(TestCluster.ADMIN)
        .setMasterBackendId(cluster.node().identity().id().toString()).build()), null, null);
  }

  private void awaitRegistered(UUID id) throws InterruptedException {
    Eventually.await(Duration.ofSeconds(20), () -> {
      try {
        cluster.adminLm().getObjectInfo(id.toString());
        return true;
      } catch (ObjectDoesNotExistException e) {
        return false;
      }
    }, "object " + id + " registered at the Logic Module");
  }

  @Test
  void objects_made_persistent_without_an_alias_are_found_by_id_as_soon_as_the_call_returns() throws Exception {
    // setup
    cluster.startDataService(Map.of());
    DataServiceClient ds = cluster.client(cluster.adminToken());
    List<UUID> ids = new ArrayList<>();
    // run: each lookup comes right after the store answered
    for (int i = 0; i < 200; i++) {
      UUID id = UUID.randomUUID();
      ds.makePersistent(List.of(point(id, "p" + i)), null);
      StoredObject info = cluster.adminLm().getObjectInfo(id.toString());
      // verify
      assertEquals(cluster.node().identity().id().toString(), info.backendId().toString());
      ids.add(id);
    }
    assertEquals(ids.size(), cluster.adminLm().getStats().getObjects());
  }

  @Test
  void concurrent_make_persistent_calls_share_logic_module_requests() throws Exception {
    // setup
    cluster.startDataService(Map.of());
    DataServiceClient ds = cluster.client(cluster.adminToken());
    ExecutorService writers = Executors.newFixedThreadPool(16);
    long before = cluster.lmCalls("RegisterObjects");
    List<Future<List<UUID>>> made = new ArrayList<>();
    // run
    try {
      for (int w = 0; w < 16; w++) {
        made.add(writers.submit(() -> {
          List<UUID> mine = new ArrayList<>();
          for (int i = 0; i < 25; i++) {
            UUID id = UUID.randomUUID();
            ds.makePersistent(List.of(point(id, "p")), null);
            mine.add(id);
          }
          return mine;
        }));
      }
      List<UUID> all = new ArrayList<>();
      for (Future<List<UUID>> f : made) {
        all.addAll(f.get(60, TimeUnit.SECONDS));
      }
      // verify: every acknowledged object is registered, in fewer requests than calls
      long requests = cluster.lmCalls("RegisterObjects") - before;
      assertEquals(400, cluster.adminLm().getStats().getObjects());
      for (UUID id : all) {
        cluster.adminLm().getObjectInfo(id.toString());
      }
      assertTrue(requests < 400, requests + " RegisterObjects requests for 400 calls");
    } finally {
      writers.shutdownNow();
    }
  }

  @Test
  void an_id_registered_as_another_object_is_refused_to_its_call_and_not_kept() throws Exception {
    // setup
    cluster.startDataService(Map.of());
    DataServiceClient ds = cluster.client(cluster.adminToken());
    UUID taken = UUID.randomUUID();
    registerElsewhere(taken);
    UUID beside = UUID.randomUUID();
    // run
    ObjectAlreadyExistsException e = assertThrows(ObjectAlreadyExistsException.class,
        () -> ds.makePersistent(List.of(point(beside, "b"), point(taken, "t")), "named"));
    UUID after = UUID.randomUUID();
    ds.makePersistent(List.of(point(after, "a")), "named");
    // verify: nothing of the refused call stays, neither stored nor registered, nor its alias
    assertTrue(e.getMessage().contains(taken.toString()), e.getMessage());
    assertFalse(cluster.store().header(beside).isPresent());
    assertFalse(cluster.store().header(taken).isPresent());
    assertThrows(ObjectDoesNotExistException.class, () -> cluster.adminLm().getObjectInfo(beside.toString()));
    assertEquals("shapes.Other", cluster.adminLm().getObjectInfo(taken.toString()).className());
    assertEquals(after.toString(), cluster.adminLm().getObjectByAlias("named", "").id().toString());
  }

  @Test
  void a_method_whose_new_objects_include_a_registered_id_fails_and_keeps_none_of_them() throws Exception {
    // setup: a user's object, served by a stand-in environment
    cluster.startDataService(Map.of());
    String token = cluster.session("jane");
    DataServiceClient user = cluster.client(token);
    UUID target = UUID.randomUUID();
    user.makePersistent(List.of(point(target, "0")), null);
    UUID taken = UUID.randomUUID();
    registerElsewhere(taken);
    UUID fresh = UUID.randomUUID();
    // run: the method's result makes a fresh object and one whose ID is taken persistent
    CompletableFuture<byte[]> call = CompletableFuture.supplyAsync(
        () -> user.callMethod(target.toString(), "spawn", TestObjects.bytes("()").toByteArray()));
    EnvironmentPeer peer = cluster.attach(); // jane's environment process, started by her call
    ExecuteRequest req = peer.nextExecute();
    peer.answer(ExecuteResult.newBuilder().setCallId(req.getCallId()).setResult(TestObjects.bytes("ok"))
        .addNewObjects(point(fresh, "f")).addNewObjects(point(taken, "t")).build());
    // verify: the call fails naming the ID, the environment drops both, and neither stays
    ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof ObjectAlreadyExistsException, String.valueOf(e.getCause()));
    assertTrue(e.getCause().getMessage().contains(taken.toString()), e.getCause().getMessage());
    DataServiceMessage evict = peer.next();
    assertTrue(evict.hasEvict(), evict.toString());
    assertEquals(Set.of(fresh.toString(), taken.toString()), Set.copyOf(evict.getEvict().getIdsList()));
    assertFalse(cluster.store().header(fresh).isPresent());
    assertFalse(cluster.store().header(taken).isPresent());
    assertThrows(ObjectDoesNotExistException.class, () -> cluster.lmAs(token).getObjectInfo(fresh.toString()));
  }

  @Test
  void a_clean_stop_leaves_its_mark_and_the_next_start_consumes_it() throws Exception {
    cluster.startDataService(kvPool());
    cluster.client(cluster.adminToken()).makePersistent(List.of(point(UUID.randomUUID(), "x")), null);
    Path mark = cluster.backendDir().resolve("stopped-cleanly");
    cluster.stopDataService();
    assertTrue(Files.exists(mark));
    cluster.restartDataService(kvPool());
    assertFalse(Files.exists(mark), "a running backend must not look cleanly stopped");
  }

  @Test
  void objects_stored_but_never_registered_are_registered_or_removed_at_the_start_after_an_unclean_stop()
      throws Exception {
    // setup: objects in the pool that the Logic Module never heard of, as a crash between the store
    // and the registration leaves them; one of them has an ID the Logic Module has as another object
    cluster.startDataService(kvPool());
    UUID orphan = UUID.randomUUID();
    UUID clash = UUID.randomUUID();
    registerElsewhere(clash);
    for (UUID id : List.of(orphan, clash)) {
      ObjectData data = point(id, "orphan").toBuilder()
          .setHeader(point(id, "orphan").getHeader().toBuilder().setDataset(TestCluster.ADMIN)).build();
      cluster.store().put(Messages.storedObject(data, "orphan"));
    }
    assertThrows(ObjectDoesNotExistException.class, () -> cluster.adminLm().getObjectInfo(orphan.toString()));
    cluster.stopDataService();
    Files.delete(cluster.backendDir().resolve("stopped-cleanly"));
    // run
    cluster.restartDataService(kvPool());
    // verify: the orphan is registered; the clashing leftover is removed, the registered object kept
    awaitRegistered(orphan);
    StoredObject info = cluster.adminLm().getObjectInfo(orphan.toString());
    assertEquals(cluster.node().identity().id().toString(), info.backendId().toString());
    assertEquals(TestCluster.ADMIN, info.dataset());
    Eventually.await(Duration.ofSeconds(20), () -> cluster.store().header(clash).isEmpty(),
        "the clashing leftover removed from the store");
    assertEquals("shapes.Other", cluster.adminLm().getObjectInfo(clash.toString()).className());
    assertTrue(cluster.store().header(orphan).isPresent());
  }
}
