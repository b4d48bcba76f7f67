package io.dataclay.logic.objects;

import io.dataclay.common.Language;
import io.dataclay.exceptions.AliasAlreadyExistsException;
import io.dataclay.exceptions.AliasDoesNotExistException;
import io.dataclay.exceptions.BackendDoesNotExistException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.DatasetDoesNotExistException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.ObjectAlreadyExistsException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.metadata.ObjectGroup;
import io.dataclay.logic.metadata.ObjectRecord;
import io.dataclay.logic.service.Stats;
import io.dataclay.testing.LogicModuleFixture;
import io.dataclay.testing.SqliteLogicModule;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class ObjectRulesTest {
  @RegisterExtension
  final SqliteLogicModule sqlite = new SqliteLogicModule();
  /** This test's Logic Module, set by {@link #sqlite} before each test. */
  private LogicModuleFixture lm;
  private String alice;
  private String bob;
  private String backend;

  @BeforeEach
  void start() {
    alice = lm.user("alice");
    bob = lm.user("bob");
    backend = lm.backend(7001);
  }

  private ObjectRecord object(String dataset) {
    return new ObjectRecord(UUID.randomUUID().toString(), "app.Person", Language.PYTHON, dataset, backend, List.of(),
        List.of(), "");
  }

  @Test
  void registered_objects_are_found_by_id_and_by_alias_in_the_sessions_dataset() {
    // setup
    ObjectRecord o = object("alice");
    // run
    lm.register(lm.backendToken, List.of(o), "p1", o.id());
    // verify
    assertEquals(List.of("p1"), lm.service.getObjectInfo(alice, o.id()).aliases());
    assertEquals(o.id(), lm.service.getObjectByAlias(alice, "p1", "").id());
    assertEquals(o.id(), lm.service.getObjectByAlias(alice, "p1", "alice").id());
    assertThrows(AliasDoesNotExistException.class, () -> lm.service.getObjectByAlias(bob, "p1", ""));
  }

  @Test
  void objects_of_a_dataset_are_hidden_from_sessions_without_access_until_granted() {
    // setup
    ObjectRecord o = object("alice");
    lm.register(lm.backendToken, List.of(o), "p1", o.id());
    // run / verify: refused; by ID, with the very answer an unknown ID gets (no ID oracle)
    String unknown = java.util.UUID.randomUUID().toString();
    String hidden = assertThrows(ObjectDoesNotExistException.class, () -> lm.service.getObjectInfo(bob, o.id()))
        .getMessage();
    String absent = assertThrows(ObjectDoesNotExistException.class, () -> lm.service.getObjectInfo(bob, unknown))
        .getMessage();
    assertEquals(absent.replace(unknown, "<id>"), hidden.replace(o.id(), "<id>"));
    assertThrows(PermissionDeniedException.class, () -> lm.service.getObjectByAlias(bob, "p1", "alice"));
    assertThrows(ObjectDoesNotExistException.class, () -> lm.service.newAlias(bob, "mine", o.id()));
    assertThrows(PermissionDeniedException.class, () -> lm.service.deleteAlias(bob, "p1", "alice"));
    // run / verify: granted
    lm.service.newDataContract(alice, LogicModuleFixture.contract("alice", "bob"));
    String bobAgain = lm.service.newSession("bob", LogicModuleFixture.PASSWORD, "").token();
    assertEquals(o.id(), lm.service.getObjectByAlias(bobAgain, "p1", "alice").id());
    lm.service.newAlias(bobAgain, "second", o.id());
    assertEquals(List.of("p1", "second"), lm.service.getObjectInfo(alice, o.id()).aliases());
  }

  @Test
  void an_administrator_sees_every_objects_metadata_as_its_listings_do_but_may_not_alias_it() {
    // setup: alice's object, which the administrator has no contract on
    ObjectRecord o = object("alice");
    lm.register(lm.backendToken, List.of(o), "p1", o.id());
    // run / verify: the dashboard's search finds it by ID, with its aliases and master
    ObjectRecord seen = lm.service.getObjectInfo(lm.adminToken, o.id());
    assertEquals(List.of("p1"), seen.aliases());
    assertEquals(backend, seen.masterBackendId());
    // ... which lets it change nothing of alice's dataset
    assertThrows(PermissionDeniedException.class, () -> lm.service.newAlias(lm.adminToken, "mine", o.id()));
  }

  @Test
  void a_taken_alias_registers_nothing() {
    // setup
    ObjectRecord first = object("alice");
    lm.register(lm.backendToken, List.of(first), "p1", first.id());
    ObjectRecord second = object("alice");
    // run
    assertThrows(AliasAlreadyExistsException.class,
        () -> lm.register(lm.backendToken, List.of(second), "p1", second.id()));
    // verify
    assertThrows(ObjectDoesNotExistException.class, () -> lm.service.getObjectInfo(alice, second.id()));
  }

  @Test
  void the_same_alias_in_two_datasets_names_two_objects() {
    // setup
    ObjectRecord mine = object("alice");
    ObjectRecord his = object("bob");
    // run
    lm.register(lm.backendToken, List.of(mine), "home", mine.id());
    lm.register(lm.backendToken, List.of(his), "home", his.id());
    // verify
    assertEquals(mine.id(), lm.service.getObjectByAlias(alice, "home", "").id());
    assertEquals(his.id(), lm.service.getObjectByAlias(bob, "home", "").id());
  }

  @Test
  void re_registration_is_idempotent_from_the_same_master_and_refused_from_another() {
    // setup
    ObjectRecord o = object("alice");
    lm.register(lm.backendToken, List.of(o), "", "");
    String other = lm.backend(7002);
    // run
    lm.register(lm.backendToken, List.of(o), "", "");
    // verify
    assertThrows(ObjectAlreadyExistsException.class, () -> lm.register(lm.backendToken,
        List.of(new ObjectRecord(o.id(), o.className(), o.language(), o.dataset(), other, List.of(), List.of(), "")),
        "", ""));
    assertEquals(backend, lm.service.getObjectInfo(alice, o.id()).masterBackendId());
  }

  @Test
  void objects_must_name_an_existing_dataset_and_registered_backends() {
    ObjectRecord o = object("nowhere");
    assertThrows(DatasetDoesNotExistException.class,
        () -> lm.register(lm.backendToken, List.of(o), "", ""));
    ObjectRecord stray = new ObjectRecord(UUID.randomUUID().toString(), "app.P", Language.PYTHON, "alice",
        UUID.randomUUID().toString(), List.of(), List.of(), "");
    BackendDoesNotExistException e = assertThrows(BackendDoesNotExistException.class,
        () -> lm.register(lm.backendToken, List.of(stray), "", ""));
    assertTrue(e.getMessage().startsWith("groups[0].objects[0].master_backend_id:"), e.getMessage());
  }

  @Test
  void a_malformed_or_refused_group_leaves_the_other_groups_of_its_request_registered() {
    // setup
    ObjectRecord first = object("alice");
    ObjectRecord malformed = new ObjectRecord("x", "app.P", Language.PYTHON, "alice", backend, List.of(), List.of(),
        "");
    ObjectRecord nowhere = object("nowhere");
    ObjectRecord last = object("bob");
    // run
    List<Optional<DataClayException>> outcomes = lm.service.registerObjects(lm.backendToken, List.of(
        new ObjectGroup(List.of(first), null, null), new ObjectGroup(List.of(object("alice"), malformed), null, null),
        new ObjectGroup(List.of(nowhere), null, null), new ObjectGroup(List.of(last), "home", last.id())));
    // verify
    assertTrue(outcomes.get(0).isEmpty());
    assertInstanceOf(InvalidArgumentException.class, outcomes.get(1).orElseThrow());
    assertTrue(outcomes.get(1).get().getMessage().startsWith("groups[1].objects[1].id:"), outcomes.get(1).get()
        .getMessage());
    assertInstanceOf(DatasetDoesNotExistException.class, outcomes.get(2).orElseThrow());
    assertTrue(outcomes.get(3).isEmpty());
    assertEquals(first.id(), lm.service.getObjectInfo(alice, first.id()).id());
    assertEquals(last.id(), lm.service.getObjectByAlias(bob, "home", "").id());
    assertEquals(2, lm.service.stats(lm.adminToken).objects());
  }

  @Test
  void a_registration_request_without_groups_is_refused() {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> lm.service.registerObjects(lm.backendToken, List.of()));
    assertTrue(e.getMessage().startsWith("groups:"), e.getMessage());
  }

  @Test
  void malformed_registrations_are_refused_naming_the_field() {
    ObjectRecord good = object("alice");
    ObjectRecord badId = new ObjectRecord("x", "app.P", Language.PYTHON, "alice", backend, List.of(), List.of(), "");
    ObjectRecord badClass = new ObjectRecord(UUID.randomUUID().toString(), "a b", Language.PYTHON, "alice", backend,
        List.of(), List.of(), "");
    ObjectRecord withAliases = new ObjectRecord(UUID.randomUUID().toString(), "app.P", Language.PYTHON, "alice",
        backend, List.of(), List.of("sneaky"), "");
    ObjectRecord badVersion = new ObjectRecord(UUID.randomUUID().toString(), "app.P", Language.PYTHON, "alice",
        backend, List.of(), List.of(), "v1");
    assertField("groups[0].objects:", List.of(), "", "");
    assertField("groups[0].objects[1].id:", List.of(good, badId), "", "");
    assertField("groups[0].objects[1].id:", List.of(good, good), "", "");
    assertField("groups[0].objects[0].class_name:", List.of(badClass), "", "");
    assertField("groups[0].objects[0].aliases:", List.of(withAliases), "", "");
    assertField("groups[0].objects[0].version_of:", List.of(badVersion), "", "");
    assertField("groups[0].alias:", List.of(good), "  spaced", good.id());
    assertField("groups[0].alias_object_id:", List.of(good), "a", "nope");
    assertField("groups[0].alias_object_id:", List.of(good), "", good.id());
    assertEquals(0, lm.service.stats(lm.adminToken).objects());
  }

  private void assertField(String field, List<ObjectRecord> objects, String alias, String aliasObjectId) {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> lm.register(lm.backendToken, objects, alias, aliasObjectId));
    assertTrue(e.getMessage().startsWith(field), e.getMessage());
  }

  @Test
  void deleting_an_alias_frees_it_and_deleting_a_missing_one_is_an_error() {
    // setup
    ObjectRecord o = object("alice");
    lm.register(lm.backendToken, List.of(o), "p1", o.id());
    // run
    lm.service.deleteAlias(alice, "p1", "");
    // verify
    assertThrows(AliasDoesNotExistException.class, () -> lm.service.getObjectByAlias(alice, "p1", ""));
    assertThrows(AliasDoesNotExistException.class, () -> lm.service.deleteAlias(alice, "p1", ""));
    lm.service.newAlias(alice, "p1", o.id());
    assertEquals(o.id(), lm.service.getObjectByAlias(alice, "p1", "").id());
  }

  @Test
  void stats_count_objects_and_aliases() {
    // setup
    ObjectRecord a = object("alice");
    ObjectRecord b = object("alice");
    // run
    lm.register(lm.backendToken, List.of(a, b), "p1", a.id());
    // verify
    Stats s = lm.service.stats(lm.adminToken);
    assertEquals(2, s.objects());
    assertEquals(1, s.aliases());
  }
}
