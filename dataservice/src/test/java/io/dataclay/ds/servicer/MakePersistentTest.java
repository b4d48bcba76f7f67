package io.dataclay.ds.servicer;

import static io.dataclay.ds.TestObjects.point;
import static io.dataclay.ds.TestObjects.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.api.StoredObject;
import io.dataclay.client.DataServiceClient;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.ds.TestCluster;
import io.dataclay.ds.TestObjects;
import io.dataclay.exceptions.AliasAlreadyExistsException;
import io.dataclay.exceptions.ClassNotRegisteredException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.ObjectAlreadyExistsException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.exceptions.ObjectNotHereException;
import io.dataclay.proto.Language;
import io.dataclay.proto.ObjectData;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(60)
class MakePersistentTest {
  @RegisterExtension static final TestCluster cluster = TestCluster.forTheClassWithDataService();
  static DataServiceClient alice;
  static LogicModuleClient aliceLm;

  @BeforeAll
  static void logIn() throws Exception {
    String token = cluster.session("alice");
    alice = cluster.client(token);
    aliceLm = cluster.lmAs(token);
  }

  @Test
  void objects_are_stored_in_the_session_dataset_and_registered_with_their_alias() {
    // setup
    UUID a = UUID.randomUUID();
    UUID b = UUID.randomUUID();
    // run
    alice.makePersistent(List.of(point(a, "1"), point(b, "2")), "first-point");
    // verify: stored (dataset forced to the session's), and known to the Logic Module
    List<ObjectData> stored = alice.getObjects(List.of(a.toString(), b.toString()));
    assertEquals("alice", stored.get(0).getHeader().getDataset());
    assertEquals("2", text(stored.get(1).getFields(0).getValue()));
    StoredObject info = aliceLm.getObjectInfo(a.toString());
    assertEquals(cluster.node().identity().id().toString(), info.backendId().toString());
    assertEquals("alice", info.dataset());
    assertEquals(TestObjects.POINT, info.className());
    assertEquals(a.toString(), aliceLm.getObjectByAlias("first-point", "").id().toString());
    assertEquals(cluster.node().identity().id().toString(), aliceLm.getObjectInfo(b.toString()).backendId().toString());
  }

  @Test
  void an_object_already_stored_is_refused_and_left_as_it_was() {
    // setup
    UUID a = UUID.randomUUID();
    alice.makePersistent(List.of(point(a, "original")), null);
    // run
    ObjectAlreadyExistsException e = assertThrows(ObjectAlreadyExistsException.class,
        () -> alice.makePersistent(List.of(point(a, "overwrite")), null));
    // verify
    assertTrue(e.getMessage().contains(a.toString()), e.getMessage());
    assertEquals("original", text(alice.getObjects(List.of(a.toString())).get(0).getFields(0).getValue()));
  }

  @Test
  void the_same_id_twice_in_one_request_is_invalid() {
    UUID a = UUID.randomUUID();
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> alice.makePersistent(List.of(point(a, "1"), point(a, "2")), null));
    assertTrue(e.getMessage().contains("objects[1].id"), e.getMessage());
    assertThrows(ObjectNotHereException.class, () -> alice.getObjects(List.of(a.toString())));
  }

  @Test
  void an_unregistered_class_is_refused_naming_it_and_nothing_is_stored() {
    // setup
    UUID ok = UUID.randomUUID();
    UUID bad = UUID.randomUUID();
    ObjectData unknown = TestObjects.object(bad, "shapes.Circle", Language.PYTHON, "r", "1");
    // run
    ClassNotRegisteredException e = assertThrows(ClassNotRegisteredException.class,
        () -> alice.makePersistent(List.of(point(ok, "1"), unknown), null));
    // verify
    assertTrue(e.getMessage().contains("shapes.Circle"), e.getMessage());
    assertThrows(ObjectNotHereException.class, () -> alice.getObjects(List.of(ok.toString())));
    assertThrows(ClassNotRegisteredException.class, () -> alice.makePersistent(
        List.of(TestObjects.object(UUID.randomUUID(), TestObjects.POINT, Language.JAVA, "x", "1")), null));
  }

  @Test
  void a_taken_alias_rolls_the_objects_back() {
    // setup
    alice.makePersistent(List.of(point(UUID.randomUUID(), "1")), "taken");
    UUID second = UUID.randomUUID();
    UUID child = UUID.randomUUID();
    long storedBefore = cluster.store().count();
    // run
    assertThrows(AliasAlreadyExistsException.class,
        () -> alice.makePersistent(List.of(point(second, "2"), point(child, "3")), "taken"));
    // verify: neither stored here nor known to the Logic Module
    assertEquals(storedBefore, cluster.store().count());
    assertThrows(ObjectNotHereException.class, () -> alice.getObjects(List.of(second.toString())));
    assertThrows(ObjectNotHereException.class, () -> alice.getObjects(List.of(child.toString())));
    assertThrows(ObjectDoesNotExistException.class, () -> aliceLm.getObjectInfo(second.toString()));
  }

  @Test
  void get_objects_of_an_id_not_held_here_is_object_not_here() {
    UUID absent = UUID.randomUUID();
    ObjectNotHereException e = assertThrows(ObjectNotHereException.class,
        () -> alice.getObjects(List.of(absent.toString())));
    assertTrue(e.getMessage().contains(absent.toString()), e.getMessage());
  }
}
