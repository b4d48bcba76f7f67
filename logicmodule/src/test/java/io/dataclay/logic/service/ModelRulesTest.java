package io.dataclay.logic.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.Language;
import io.dataclay.exceptions.ClassNotRegisteredException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.NamespaceConflictException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.metadata.ModelRecord;
import io.dataclay.testing.LogicModuleFixture;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class ModelRulesTest {
  @TempDir
  Path dir;
  private LogicModuleFixture lm;
  private String alice;

  @BeforeEach
  void start() {
    lm = new LogicModuleFixture("jdbc:sqlite:" + dir.resolve("metadata.db"));
    alice = lm.modeler("alice");
  }

  @AfterEach
  void stop() {
    lm.close();
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
    assertEquals("alice", lm.service.getModel(bob, "shop").owner());
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
    assertEquals(List.of(), lm.service.listModels(alice, null));
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
    assertEquals(List.of("jshop", "shop"), lm.service.listModels(alice, null).stream().map(ModelRecord::namespace)
        .toList());
    assertEquals(List.of("jshop"), lm.service.listModels(alice, Language.JAVA).stream().map(ModelRecord::namespace)
        .toList());
  }
}
