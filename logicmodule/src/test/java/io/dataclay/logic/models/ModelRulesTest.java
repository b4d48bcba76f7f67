package io.dataclay.logic.models;

import io.dataclay.common.Language;
import io.dataclay.exceptions.ClassNotRegisteredException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.NamespaceConflictException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.metadata.ModelRecord;
import io.dataclay.logic.metadata.ModelStore;
import io.dataclay.logic.metadata.ObjectGroup;
import io.dataclay.logic.metadata.ObjectRecord;
import io.dataclay.testing.LogicModuleFixture;
import io.dataclay.testing.SqliteLogicModule;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class ModelRulesTest {
  @RegisterExtension
  final SqliteLogicModule sqlite = new SqliteLogicModule();
  /** This test's Logic Module, set by {@link #sqlite} before each test. */
  private LogicModuleFixture lm;
  private String alice;

  @BeforeEach
  void start() {
    alice = lm.modeler("alice");
  }

  private static ModelRecord model(String ns, String path, String className) {
    return new ModelRecord(ns, Language.PYTHON, "ignored", 99, List.of(new ModelRecord.File(path, new byte[] {42})),
        List.of(new ModelRecord.ClassInfo(className, List.of(new ModelRecord.Member("name", "str")),
            List.of(new ModelRecord.Member("greet", "(self) -> str")))));
  }

  @Test
  void the_first_registrant_owns_the_namespace_and_versions_increase() {
    // run
    ModelRecord v1 = lm.service.registerModel(alice, model("shop", "shop/models.py", "shop.models.Item"));
    ModelRecord v2 = lm.service.registerModel(alice, model("shop", "shop/models.py", "shop.models.Item"));
    // verify
    assertEquals("alice", v1.owner());
    assertEquals(1, v1.version());
    assertEquals(2, v2.version());
    assertEquals(2, lm.service.getModel(lm.adminToken, "shop").version());
  }

  @Test
  void python_modules_and_classes_in_the_client_librarys_packages_are_refused_but_dataclay_contrib_is_not() {
    // run
    ModelRecord contrib = lm.service.registerModel(alice, model("shapes", "dataclay/contrib/shapes/model.py",
        "dataclay.contrib.shapes.model.Square"));
    // verify: what would shadow the client library is refused, whichever part names it
    assertEquals(1, contrib.version());
    for (String[] bad : new String[][] {
        {"dataclay/mine.py", "shop.models.Item"}, {"dataclay/contrib/__init__.py", "shop.models.Item"},
        {"storage/api.py", "shop.models.Item"}, {"shop/models.py", "dataclay.mine.Mine"},
        {"shop/models.py", "dataclay.contrib.Mine"}}) {
      InvalidArgumentException refused = assertThrows(InvalidArgumentException.class,
          () -> lm.service.registerModel(alice, model("bad", bad[0], bad[1])));
      assertTrue(refused.getMessage().contains("client library's own package"), refused.getMessage());
    }
  }

  @Test
  void registering_a_model_needs_an_administrator_or_the_right_an_administrator_grants() {
    // setup
    String carol = lm.user("carol");
    // run
    PermissionDeniedException refused = assertThrows(PermissionDeniedException.class,
        () -> lm.service.registerModel(carol, model("tools", "tools/t.py", "tools.t.Tool")));
    lm.service.setModelRegistration(lm.adminToken, "carol", true);
    ModelRecord granted = lm.service.registerModel(carol, model("tools", "tools/t.py", "tools.t.Tool"));
    lm.service.setModelRegistration(lm.adminToken, "carol", false);
    PermissionDeniedException revoked = assertThrows(PermissionDeniedException.class,
        () -> lm.service.registerModel(carol, model("tools", "tools/t.py", "tools.t.Tool")));
    ModelRecord byAdmin = lm.service.registerModel(lm.adminToken, model("admintools", "at/t.py", "at.t.Tool"));
    // verify
    assertTrue(refused.getMessage().contains("GrantModelRegistration"), refused.getMessage());
    assertEquals(1, granted.version());
    assertTrue(revoked.getMessage().contains("carol"), revoked.getMessage());
    assertEquals(1, lm.service.getModel(carol, "tools").version());
    assertEquals("admin", byAdmin.owner());
  }

  @Test
  void a_model_larger_than_the_quota_is_refused_and_not_stored() {
    // setup
    byte[] big = new byte[(int) LogicModuleFixture.MAX_MODEL_BYTES + 1];
    ModelRecord m = new ModelRecord("huge", Language.PYTHON, "", 0, List.of(new ModelRecord.File("huge/h.py", big)),
        List.of(new ModelRecord.ClassInfo("huge.h.H", List.of(), List.of())));
    // run
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> lm.service.registerModel(alice, m));
    // verify
    assertTrue(e.getMessage().contains("DATACLAY_MODEL_MAX_BYTES"), e.getMessage());
    assertThrows(ClassNotRegisteredException.class, () -> lm.service.getModel(alice, "huge"));
  }

  @Test
  void another_account_cannot_register_into_an_owned_namespace() {
    // setup
    String bob = lm.modeler("bob");
    lm.service.registerModel(alice, model("shop", "shop/models.py", "shop.models.Item"));
    // run / verify
    assertThrows(PermissionDeniedException.class,
        () -> lm.service.registerModel(bob, model("shop", "shop/models.py", "shop.models.Item")));
    assertEquals("alice", lm.service.getModel(lm.adminToken, "shop").owner());
  }

  @Test
  void a_module_or_class_of_another_namespace_is_a_namespace_conflict() {
    // setup
    lm.service.registerModel(alice, model("shop", "shop/models.py", "shop.models.Item"));
    // run / verify
    assertThrows(NamespaceConflictException.class,
        () -> lm.service.registerModel(alice, model("store", "shop/models.py", "store.Item")));
    assertThrows(NamespaceConflictException.class,
        () -> lm.service.registerModel(alice, model("store", "store/models.py", "shop.models.Item")));
    assertThrows(ClassNotRegisteredException.class, () -> lm.service.getModel(alice, "store"));
  }

  @Test
  void malformed_models_are_refused_naming_the_field_and_nothing_is_stored() {
    List<ModelRecord> bad = List.of(
        new ModelRecord("shop", Language.PYTHON, "", 0, List.of(), List.of()),
        model("shop", "../escape.py", "shop.Item"),
        model("shop", "/abs.py", "shop.Item"),
        model("shop", "shop/a.py", "not a class"),
        model("bad name!", "shop/a.py", "shop.Item"),
        new ModelRecord("shop", Language.PYTHON, "", 0,
            List.of(new ModelRecord.File("a.py", new byte[0]), new ModelRecord.File("a.py", new byte[0])), List.of()));
    List<String> fields = List.of("files:", "files[0].path:", "files[0].path:", "classes[0].name:", "namespace:",
        "files[1].path:");
    for (int i = 0; i < bad.size(); i++) {
      ModelRecord m = bad.get(i);
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
          () -> lm.service.registerModel(alice, m));
      assertTrue(e.getMessage().startsWith(fields.get(i)), e.getMessage());
    }
    assertEquals(List.of(), lm.service.listModels(alice, null).models());
  }

  @Test
  void models_are_listed_by_language() {
    // setup
    lm.service.registerModel(alice, model("shop", "shop/models.py", "shop.models.Item"));
    lm.service.registerModel(alice, new ModelRecord("jshop", Language.JAVA, "", 0,
        List.of(new ModelRecord.File("org/shop/Item.class", new byte[] {1})),
        List.of(new ModelRecord.ClassInfo("org.shop.Item", List.of(), List.of(
            new ModelRecord.Member("add", "void add(int)"), new ModelRecord.Member("add", "void add(long)"))))));
    // run / verify
    assertEquals(List.of("jshop", "shop"), namespaces(lm.service.listModels(alice, null)));
    assertEquals(List.of("jshop"), namespaces(lm.service.listModels(alice, Language.JAVA)));
  }

  private static List<String> namespaces(ModelStore.Catalog catalog) {
    return catalog.models().stream().map(ModelRecord::namespace).toList();
  }

  @Test
  void an_unpublished_model_is_read_only_by_its_owner_administrators_and_backends() {
    // setup
    String bob = lm.user("bob");
    lm.service.registerModel(alice, model("shop", "shop/models.py", "shop.models.Item"));
    // run
    ClassNotRegisteredException hidden = assertThrows(ClassNotRegisteredException.class,
        () -> lm.service.getModel(bob, "shop"));
    ClassNotRegisteredException absent = assertThrows(ClassNotRegisteredException.class,
        () -> lm.service.getModel(bob, "nothing"));
    ModelStore.Catalog forBackends = lm.service.listModels(lm.backendToken, null);
    // verify: a model bob may not read answers exactly as one nobody registered
    assertEquals(absent.getMessage().replace("nothing", "shop"), hidden.getMessage());
    assertEquals(List.of(), lm.service.listModels(bob, null).models());
    assertEquals(List.of("shop"), namespaces(lm.service.listModels(alice, null)));
    assertEquals(List.of("shop"), namespaces(lm.service.listModels(lm.adminToken, null)));
    assertFalse(lm.service.getModel(alice, "shop").published());
    assertEquals(0, lm.service.getModel(alice, "shop").revision());
    assertEquals(List.of("shop"), namespaces(forBackends));
    assertTrue(forBackends.revision() > 0);
    assertEquals(forBackends.revision(), forBackends.models().get(0).revision());
  }

  @Test
  void an_administrators_model_starts_published_and_anyone_elses_does_not() {
    // run
    ModelRecord byAdmin = lm.service.registerModel(lm.adminToken, model("admintools", "at/t.py", "at.t.Tool"));
    ModelRecord byAlice = lm.service.registerModel(alice, model("shop", "shop/models.py", "shop.models.Item"));
    // verify
    assertTrue(byAdmin.published());
    assertFalse(byAlice.published());
    assertEquals(List.of("admintools"), namespaces(lm.service.listModels(lm.user("bob"), null)));
  }

  @Test
  void only_the_owner_or_an_administrator_publishes_and_others_learn_nothing_of_an_unpublished_model() {
    // setup
    String bob = lm.user("bob");
    lm.service.registerModel(alice, model("shop", "shop/models.py", "shop.models.Item"));
    // run
    ClassNotRegisteredException hidden = assertThrows(ClassNotRegisteredException.class,
        () -> lm.service.setModelPublished(bob, "shop", true));
    lm.service.setModelPublished(alice, "shop", true);
    ModelRecord seenByBob = lm.service.getModel(bob, "shop");
    PermissionDeniedException notOwner = assertThrows(PermissionDeniedException.class,
        () -> lm.service.setModelPublished(bob, "shop", false));
    PermissionDeniedException backend = assertThrows(PermissionDeniedException.class,
        () -> lm.service.setModelPublished(lm.backendToken, "shop", false));
    InvalidArgumentException malformed = assertThrows(InvalidArgumentException.class,
        () -> lm.service.setModelPublished(alice, "bad name!", true));
    lm.service.setModelPublished(lm.adminToken, "shop", false);
    // verify
    assertTrue(hidden.getMessage().contains("no model is registered under 'shop'"), hidden.getMessage());
    assertTrue(seenByBob.published());
    assertTrue(notOwner.getMessage().contains("'alice'"), notOwner.getMessage());
    assertTrue(backend.getMessage().contains("backend"), backend.getMessage());
    assertTrue(malformed.getMessage().startsWith("namespace"), malformed.getMessage());
    assertThrows(ClassNotRegisteredException.class, () -> lm.service.getModel(bob, "shop"));
  }

  @Test
  void removing_a_model_is_refused_while_its_objects_exist_unless_forced_and_frees_the_namespace() {
    // setup: one object of the model's class
    String bob = lm.modeler("bob");
    lm.service.registerModel(alice, model("shop", "shop/models.py", "shop.models.Item"));
    lm.store.objects().register(List.of(new ObjectGroup(List.of(new ObjectRecord(UUID.randomUUID().toString(),
        "shop.models.Item", Language.PYTHON, "alice", lm.backendId, List.of(), List.of(), "")), null, null)));
    // run
    ClassNotRegisteredException byStranger = assertThrows(ClassNotRegisteredException.class,
        () -> lm.service.removeModel(bob, "shop", true));
    NamespaceConflictException inUse = assertThrows(NamespaceConflictException.class,
        () -> lm.service.removeModel(alice, "shop", false));
    ModelRecord kept = lm.service.getModel(alice, "shop");
    long left = lm.service.removeModel(alice, "shop", true);
    // verify: the refusal says how many and what --force does; afterwards anyone may take the namespace
    assertTrue(byStranger.getMessage().contains("no model is registered under 'shop'"), byStranger.getMessage());
    assertTrue(inUse.getMessage().contains("1 object(s)") && inUse.getMessage().contains("--force"),
        inUse.getMessage());
    assertEquals(1, kept.version());
    assertEquals(1, left);
    assertThrows(ClassNotRegisteredException.class, () -> lm.service.getModel(alice, "shop"));
    assertEquals("bob", lm.service.registerModel(bob, model("shop", "shop/models.py", "shop.models.Item")).owner());
    assertEquals(1, lm.service.removeModel(lm.adminToken, "shop", true));
  }

  @Test
  void revoking_the_registration_right_withdraws_the_accounts_models_and_granting_it_restores_them() {
    // setup: alice's published model, which bob uses
    String bob = lm.user("bob");
    lm.service.registerModel(alice, model("shop", "shop/models.py", "shop.models.Item"));
    lm.service.setModelPublished(alice, "shop", true);
    // run
    lm.service.setModelRegistration(lm.adminToken, "alice", false);
    ModelRecord forOwner = lm.service.getModel(alice, "shop");
    List<ModelRecord> forBackends = lm.service.listModels(lm.backendToken, null).models();
    List<ModelRecord> forBob = lm.service.listModels(bob, null).models();
    lm.service.setModelRegistration(lm.adminToken, "alice", true);
    // verify: withdrawn, published or not; backends get it without its code
    assertTrue(forOwner.withdrawn());
    assertEquals(1, forOwner.files().size());
    assertTrue(forBackends.get(0).withdrawn());
    assertEquals(List.of(), forBackends.get(0).files());
    assertEquals(List.of(), forBob);
    assertFalse(lm.service.getModel(bob, "shop").withdrawn());
    assertEquals(1, lm.service.listModels(lm.backendToken, null).models().get(0).files().size());
  }
}
