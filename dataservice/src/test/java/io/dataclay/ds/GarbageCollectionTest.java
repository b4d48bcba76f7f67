package io.dataclay.ds;

import static io.dataclay.ds.TestObjects.point;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.client.DataServiceClient;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.proto.Field;
import io.dataclay.proto.GarbageReport;
import io.dataclay.proto.ObjectData;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Garbage collection end to end: the real Logic Module collecting on a real Data Service. */
@Timeout(60)
class GarbageCollectionTest {
  @RegisterExtension final TestCluster cluster = TestCluster.forEachTestWithDataService();
  private DataServiceClient admin;

  @BeforeEach
  void logIn() throws Exception {
    admin = cluster.client(cluster.backendToken());
  }

  /** A Point whose field x references {@code targets}. */
  private static ObjectData pointTo(UUID id, UUID... targets) {
    Field.Builder x = point(id, "x").getFields(0).toBuilder();
    for (UUID t : targets) {
      x.addReferences(t.toString());
    }
    return point(id, "x").toBuilder().setFields(0, x).build();
  }

  private boolean stored(UUID id) {
    return cluster.store().get(id).isPresent();
  }

  /** Whether the Logic Module knows the object, asked in a new session of the dataset's owner. */
  private boolean registered(String owner, UUID id) {
    try {
      cluster.lmAs(cluster.session(owner)).getObjectInfo(id.toString());
      return true;
    } catch (ObjectDoesNotExistException e) {
      return false;
    }
  }

  @Test
  void what_no_alias_open_session_or_reachable_object_reaches_is_collected_and_nothing_else() throws Exception {
    // setup: bob's session closes; alice's stays open
    String bobToken = cluster.session("bob");
    DataServiceClient bob = cluster.client(bobToken);
    DataServiceClient alice = cluster.client(cluster.session("alice"));
    UUID lone = UUID.randomUUID();
    UUID cycleA = UUID.randomUUID();
    UUID cycleB = UUID.randomUUID();
    UUID named = UUID.randomUUID();
    UUID child = UUID.randomUUID();
    UUID grandchild = UUID.randomUUID();
    UUID unnamed = UUID.randomUUID();
    UUID held = UUID.randomUUID();
    bob.makePersistent(List.of(point(lone, "1")), null);
    bob.makePersistent(List.of(pointTo(cycleA, cycleB), pointTo(cycleB, cycleA)), null);
    bob.makePersistent(List.of(pointTo(named, child), pointTo(child, grandchild, named), point(grandchild, "3")),
        "kept");
    bob.makePersistent(List.of(point(unnamed, "4")), "dropped");
    alice.makePersistent(List.of(point(held, "5")), null);
    LogicModuleClient bobLm = cluster.lmAs(bobToken);
    bobLm.deleteAlias("dropped", "");
    bobLm.closeSession();
    // run
    GarbageReport report = cluster.adminLm().collectGarbage();
    GarbageReport again = cluster.adminLm().collectGarbage();
    // verify
    assertEquals(4, report.getCollected());
    assertEquals(8, report.getExamined());
    assertEquals(0, again.getCollected());
    for (UUID gone : List.of(lone, cycleA, cycleB, unnamed)) {
      assertTrue(!stored(gone) && !registered("bob", gone), "not collected: " + gone);
    }
    for (UUID kept : List.of(named, child, grandchild)) {
      assertTrue(stored(kept) && registered("bob", kept), "collected: " + kept);
    }
    assertTrue(stored(held) && registered("alice", held));
    assertEquals(4, cluster.adminLm().getStats().getObjectsCollected());
    assertEquals(4, admin.getStatus(5_000).getStore().getObjectsCollected());
  }

  @Test
  void an_object_unreachable_after_its_alias_is_deleted_is_collected_with_what_it_references() throws Exception {
    // setup
    String token = cluster.session("carol");
    DataServiceClient carol = cluster.client(token);
    UUID root = UUID.randomUUID();
    UUID leaf = UUID.randomUUID();
    carol.makePersistent(List.of(pointTo(root, leaf), point(leaf, "leaf")), "root");
    cluster.lmAs(token).closeSession();
    GarbageReport whileNamed = cluster.adminLm().collectGarbage();
    // run
    LogicModuleClient carolAgain = cluster.lmAs(cluster.session("carol"));
    carolAgain.deleteAlias("root", "");
    carolAgain.closeSession();
    GarbageReport afterDelete = cluster.adminLm().collectGarbage();
    // verify
    assertEquals(0, whileNamed.getCollected());
    assertEquals(2, afterDelete.getCollected());
    assertTrue(!stored(root) && !stored(leaf));
  }

  @Test
  void a_version_is_collected_once_nothing_reaches_it_and_while_kept_it_keeps_its_original() throws Exception {
    // setup: grace's aliased object and a version of it, both made in a session that closes; heidi's
    // unaliased object, and a version of it made in another session that stays open
    String graceToken = cluster.session("grace");
    DataServiceClient grace = cluster.client(graceToken);
    UUID named = UUID.randomUUID();
    grace.makePersistent(List.of(point(named, "1")), "named");
    UUID dropped = grace.newVersion(named.toString(), "").version().id();
    cluster.lmAs(graceToken).closeSession();
    String heidiToken = cluster.session("heidi");
    UUID original = UUID.randomUUID();
    cluster.client(heidiToken).makePersistent(List.of(point(original, "2")), null);
    cluster.lmAs(heidiToken).closeSession();
    String laterToken = cluster.session("heidi");
    UUID held = cluster.client(laterToken).newVersion(original.toString(), "").version().id();
    // run
    GarbageReport whileHeld = cluster.adminLm().collectGarbage();
    boolean originalKept = stored(original) && stored(held);
    cluster.lmAs(laterToken).closeSession();
    GarbageReport afterClose = cluster.adminLm().collectGarbage();
    // verify: the unreached version went at once, although its original stays (aliased); the held
    // version kept its otherwise unreachable original until its session closed
    assertEquals(1, whileHeld.getCollected());
    assertTrue(!stored(dropped) && !registered("grace", dropped) && stored(named));
    assertTrue(originalKept, "the original of a held version was collected");
    assertEquals(2, afterClose.getCollected());
    assertTrue(!stored(original) && !stored(held) && !registered("heidi", held));
  }

  @Test
  void nothing_is_collected_while_the_backend_holding_the_objects_is_stopped() throws Exception {
    // setup
    String token = cluster.session("dave");
    UUID lone = UUID.randomUUID();
    cluster.client(token).makePersistent(List.of(point(lone, "1")), null);
    cluster.lmAs(token).closeSession();
    // run
    cluster.stopDataService();
    BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
        () -> cluster.adminLm().collectGarbage());
    // verify
    assertTrue(e.getMessage().contains("nothing collected"), e.getMessage());
    assertTrue(registered("dave", lone));
    assertEquals(0, cluster.adminLm().getStats().getObjectsCollected());
  }

  @Test
  void collection_steps_are_refused_to_sessions_that_are_not_administrators() {
    // setup
    DataServiceClient erin = cluster.client(cluster.session("erin"));
    // verify
    assertThrows(PermissionDeniedException.class, () -> erin.beginCollection(1));
    assertThrows(PermissionDeniedException.class, () -> erin.endCollection(1));
    assertThrows(PermissionDeniedException.class, () -> cluster.lmAs(cluster.session("frank")).collectGarbage());
  }
}
