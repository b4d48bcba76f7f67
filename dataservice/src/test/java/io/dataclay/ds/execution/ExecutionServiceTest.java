package io.dataclay.ds.execution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.Language;
import io.dataclay.ds.collection.ReferenceRecorder;
import io.dataclay.ds.environments.Environments;
import io.dataclay.ds.environments.ExecutionKind;
import io.dataclay.ds.models.ClassAvailability;
import io.dataclay.ds.models.ModelBundle;
import io.dataclay.ds.models.ModelRegistry;
import io.dataclay.ds.replication.Mastership;
import io.dataclay.ds.replication.ReplicaSets;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.ClassNotRegisteredException;
import io.dataclay.exceptions.ObjectNotHereException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ExecutionServiceTest {
  private final ObjectStore store = ObjectStores.open(new StoreConfig("memory", null, 1 << 20));
  private final ModelRegistry registry = new ModelRegistry();
  private final ExecutionService service = new ExecutionService(store, new Environments(),
      new ReferenceRecorder(store, token -> {
        throw new AssertionError("no session is validated here");
      }, Runnable::run, ReferenceRecorder.DEFAULT_BUDGET), installed(registry),
      new ReplicaSets(null, null, new Mastership(UUID.randomUUID(), System::nanoTime), Runnable::run), Runnable::run);

  // m.C, in both languages, belongs to a published model; x.Secret to bob's unpublished one
  private static ClassAvailability installed(ModelRegistry registry) {
    for (Language language : Language.values()) {
      registry.record(new ModelBundle("m-" + language, language, 1, List.of(), List.of("m.C"), "root", true, false, 1));
    }
    registry.record(new ModelBundle("secret", Language.PYTHON, 1, List.of(), List.of("x.Secret"), "bob", false, false,
        2));
    ClassAvailability classes = new ClassAvailability(registry, 1000);
    classes.markInstalled();
    return classes;
  }
  private final Session ann = new Session("t", "ann", "ann", Set.of("ann"), Long.MAX_VALUE, false);

  @AfterEach
  void close() {
    store.close();
  }

  private UUID stored(Language language, String dataset) {
    return stored("m.C", language, dataset);
  }

  private UUID stored(String className, Language language, String dataset) {
    UUID id = UUID.randomUUID();
    store.put(new StoredObject(id, ObjectHeader.of(className, language, dataset),
        Map.of("x", FieldValue.of(new byte[] {1}))));
    return id;
  }

  @Test
  void an_object_not_stored_here_is_object_not_here() {
    UUID id = UUID.randomUUID();
    ObjectNotHereException e = assertThrows(ObjectNotHereException.class,
        () -> service.execute(ann, id, ExecutionKind.CALL_METHOD, "m", new byte[0]));
    assertTrue(e.getMessage().contains(id.toString()), e.getMessage());
  }

  @Test
  void an_object_of_another_dataset_is_refused_before_any_environment_runs_as_if_not_stored_here() {
    UUID id = stored(Language.PYTHON, "bob");
    UUID absent = UUID.randomUUID();
    ObjectNotHereException e = assertThrows(ObjectNotHereException.class,
        () -> service.execute(ann, id, ExecutionKind.GET_FIELD, "x", new byte[0]));
    ObjectNotHereException none = assertThrows(ObjectNotHereException.class,
        () -> service.execute(ann, absent, ExecutionKind.GET_FIELD, "x", new byte[0]));
    assertEquals(none.getMessage().replace(absent.toString(), "<id>"), e.getMessage().replace(id.toString(), "<id>"));
    assertFalse(e.getMessage().contains("bob"), e.getMessage());
  }

  @Test
  void a_language_without_an_environment_is_unavailable_naming_it() {
    for (Language language : Language.values()) {
      UUID id = stored(language, "ann");
      BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
          () -> service.execute(ann, id, ExecutionKind.CALL_METHOD, "m", new byte[0]));
      assertTrue(e.getMessage().contains(language.name()), e.getMessage());
    }
  }

  @Test
  void an_object_of_a_class_the_caller_may_not_use_is_refused_before_any_environment_runs() {
    // setup: an object of bob's unpublished class planted in ann's dataset, and one of a removed model
    UUID planted = stored("x.Secret", Language.PYTHON, "ann");
    UUID orphan = stored("gone.Class", Language.PYTHON, "ann");
    // run
    PermissionDeniedException e = assertThrows(PermissionDeniedException.class,
        () -> service.execute(ann, planted, ExecutionKind.CALL_METHOD, "m", new byte[0]));
    ClassNotRegisteredException unknown = assertThrows(ClassNotRegisteredException.class,
        () -> service.execute(ann, orphan, ExecutionKind.GET_FIELD, "x", new byte[0]));
    // verify
    assertTrue(e.getMessage().contains("'secret'") && e.getMessage().contains("'bob'"), e.getMessage());
    assertTrue(unknown.getMessage().contains("gone.Class"), unknown.getMessage());
  }
}
