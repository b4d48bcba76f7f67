package io.dataclay.ds.models;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.Language;
import io.dataclay.ds.session.Session;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.ClassNotRegisteredException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A backend waits for its start-up models instead of refusing, and fetches a model it missed before
 * refusing; who may use a class, and changes applied in the Logic Module's order.
 */
@Timeout(30)
class ClassAvailabilityTest {
  private final ModelRegistry registry = new ModelRegistry();

  private static ModelBundle bundle(String namespace, long version, String... classes) {
    return new ModelBundle(namespace, Language.PYTHON, version, List.of(), List.of(classes));
  }

  @Test
  void a_class_asked_for_during_the_start_up_install_waits_for_it_instead_of_being_refused() throws Exception {
    // setup
    ClassAvailability classes = new ClassAvailability(registry, 20_000);
    ExecutorService caller = Executors.newSingleThreadExecutor();
    try {
      // run: the call arrives before the models are installed
      Future<Boolean> answer = caller.submit(() -> classes.isAvailable(Language.PYTHON, "people.Person"));
      Thread.sleep(200);
      assertFalse(answer.isDone(), "the call did not wait for the start-up install");
      registry.record(bundle("people", 1, "people.Person"));
      classes.markInstalled();
      // verify
      assertTrue(answer.get(10, TimeUnit.SECONDS));
    } finally {
      caller.shutdownNow();
    }
  }

  @Test
  void an_unknown_class_is_refused_naming_the_command_that_registers_it_and_main_script_classes_as_never_storable() {
    ClassAvailability classes = new ClassAvailability(registry, 100);
    classes.markInstalled();
    classes.refreshWith(() -> {});
    ClassNotRegisteredException script = assertThrows(ClassNotRegisteredException.class,
        () -> classes.requireUsableNow(null, Language.PYTHON, "__main__.Point", "objects[0]"));
    ClassNotRegisteredException unknown = assertThrows(ClassNotRegisteredException.class,
        () -> classes.requireUsableNow(null, Language.PYTHON, "shapes.model.Square", "objects[0]"));
    ClassNotRegisteredException java = assertThrows(ClassNotRegisteredException.class,
        () -> classes.requireUsableNow(null, Language.JAVA, "com.example.Square", "objects[0]"));
    assertTrue(script.getMessage().contains("class Point is defined in the script being run")
        && script.getMessage().contains("never be stored")
        && script.getMessage().contains("dataclaycmd NewModel <user> - <namespace> <directory> python"),
        script.getMessage());
    assertTrue(unknown.getMessage().contains("shapes.model.Square")
        && unknown.getMessage().contains("dataclaycmd NewModel <user> - <namespace> <directory holding shapes> python"),
        unknown.getMessage());
    assertTrue(java.getMessage().contains("<classes directory or jar> java"), java.getMessage());
    for (ClassNotRegisteredException e : List.of(script, unknown, java)) {
      assertFalse(e.getMessage().contains("objects[0]") || e.getMessage().contains("PYTHON"), e.getMessage());
    }
  }

  @Test
  void a_start_up_install_slower_than_the_wait_is_backend_unavailable_not_class_not_registered() {
    ClassAvailability classes = new ClassAvailability(registry, 100);
    BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
        () -> classes.isAvailable(Language.PYTHON, "people.Person"));
    assertTrue(e.getMessage().contains("installing the registered models"), e.getMessage());
    assertFalse(classes.ready());
  }

  @Test
  void a_class_this_backend_missed_is_fetched_once_before_it_is_refused() {
    // setup: the backend was installed without the model (its deployment never arrived)
    ClassAvailability classes = new ClassAvailability(registry, 1000);
    AtomicInteger fetches = new AtomicInteger();
    classes.refreshWith(() -> {
      fetches.incrementAndGet();
      registry.record(bundle("people", 1, "people.Person"));
    });
    classes.markInstalled();
    assertFalse(classes.isDecidedNow(Language.PYTHON, "people.Person"));
    // run
    boolean person = classes.isAvailable(Language.PYTHON, "people.Person");
    boolean again = classes.isAvailable(Language.PYTHON, "people.Person");
    boolean unknown = classes.isAvailable(Language.PYTHON, "people.Nobody");
    // verify: known after one fetch; a class no model has is refused after one more
    assertTrue(person);
    assertTrue(again);
    assertFalse(unknown);
    assertEquals(2, fetches.get());
  }

  @Test
  void concurrent_misses_share_a_fetch_that_started_after_them() throws Exception {
    // setup: a slow Logic Module
    ClassAvailability classes = new ClassAvailability(registry, 1000);
    AtomicInteger fetches = new AtomicInteger();
    CountDownLatch firstStarted = new CountDownLatch(1);
    classes.refreshWith(() -> {
      fetches.incrementAndGet();
      firstStarted.countDown();
      sleep(300);
    });
    classes.markInstalled();
    ExecutorService callers = Executors.newFixedThreadPool(8);
    try {
      // run: one miss starts a fetch; seven more arrive while it runs
      List<Future<Boolean>> answers = new ArrayList<>();
      answers.add(callers.submit(() -> classes.isAvailable(Language.PYTHON, "x.Unknown")));
      assertTrue(firstStarted.await(5, TimeUnit.SECONDS));
      for (int i = 0; i < 7; i++) {
        answers.add(callers.submit(() -> classes.isAvailable(Language.PYTHON, "x.Unknown")));
      }
      for (Future<Boolean> a : answers) {
        assertFalse(a.get(10, TimeUnit.SECONDS));
      }
      // verify: the seven missed during the first fetch, so one more fetch serves them all
      assertEquals(2, fetches.get());
    } finally {
      callers.shutdownNow();
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static Session user(String name) {
    return new Session("t-" + name, name, name, java.util.Set.of(name), Long.MAX_VALUE, false);
  }

  private static ModelBundle owned(String namespace, String owner, boolean published, boolean withdrawn,
      long revision, String... classes) {
    return new ModelBundle(namespace, Language.PYTHON, 1, List.of(), List.of(classes), owner, published, withdrawn,
        revision);
  }

  @Test
  void an_unpublished_class_is_usable_by_its_owner_administrators_and_backends_only() {
    // setup
    ClassAvailability classes = new ClassAvailability(registry, 1000);
    registry.record(owned("shop", "alice", false, false, 1, "shop.Item"));
    classes.markInstalled();
    Session admin = new Session("t", "root", "root", java.util.Set.of("root"), Long.MAX_VALUE, true);
    Session backend = new Session("t", "_dataclay_backends", "_dataclay_backends", java.util.Set.of(),
        java.util.Set.of(), Long.MAX_VALUE, false, true, 0);
    // run
    classes.requireUsable(user("alice"), Language.PYTHON, "shop.Item", "objects[0]");
    classes.requireUsable(admin, Language.PYTHON, "shop.Item", "objects[0]");
    classes.requireUsable(backend, Language.PYTHON, "shop.Item", "objects[0]");
    PermissionDeniedException refused = assertThrows(PermissionDeniedException.class,
        () -> classes.requireUsable(user("bob"), Language.PYTHON, "shop.Item", "objects[3]"));
    registry.record(owned("shop", "alice", true, false, 2, "shop.Item"));
    classes.requireUsable(user("bob"), Language.PYTHON, "shop.Item", "objects[3]");
    // verify: the refusal names the model, its owner and what to do
    assertTrue(refused.getMessage().contains("'shop'") && refused.getMessage().contains("'alice'")
        && refused.getMessage().contains("PublishModel") && refused.getMessage().contains("objects[3]"),
        refused.getMessage());
    assertTrue(registry.usableBy(user("bob"), Language.PYTHON, "shop.Item"));
    assertEquals(java.util.Optional.of("shop"), registry.namespaceOf(Language.PYTHON, "shop.Item"));
  }

  @Test
  void a_withdrawn_class_is_refused_to_everyone_saying_why_without_asking_the_logic_module() {
    // setup
    ClassAvailability classes = new ClassAvailability(registry, 1000);
    AtomicInteger fetches = new AtomicInteger();
    classes.refreshWith(fetches::incrementAndGet);
    registry.record(owned("shop", "alice", true, true, 3, "shop.Item"));
    classes.markInstalled();
    Session admin = new Session("t", "root", "root", java.util.Set.of("root"), Long.MAX_VALUE, true);
    // run
    ClassNotRegisteredException owner = assertThrows(ClassNotRegisteredException.class,
        () -> classes.requireUsable(user("alice"), Language.PYTHON, "shop.Item", "object x"));
    ClassNotRegisteredException byAdmin = assertThrows(ClassNotRegisteredException.class,
        () -> classes.requireUsable(admin, Language.PYTHON, "shop.Item", "object x"));
    // verify
    assertTrue(owner.getMessage().contains("revoked") && owner.getMessage().contains("GrantModelRegistration"),
        owner.getMessage());
    assertTrue(byAdmin.getMessage().contains("'shop'"), byAdmin.getMessage());
    assertEquals(0, fetches.get());
    assertFalse(registry.usableBy(admin, Language.PYTHON, "shop.Item"));
  }

  @Test
  void an_older_change_never_undoes_a_newer_one_and_a_removal_is_remembered() {
    // setup
    registry.record(owned("shop", "alice", true, false, 5, "shop.Item"));
    // run / verify: an older state and an older removal are ignored
    assertFalse(registry.accepts(owned("shop", "alice", false, false, 4, "shop.Item")));
    assertTrue(registry.forget("shop", 4).isEmpty());
    assertTrue(registry.usableBy(user("bob"), Language.PYTHON, "shop.Item"));
    // a newer removal wins, and a state older than it does not bring the model back
    assertTrue(registry.forget("shop", 6).isPresent());
    assertFalse(registry.accepts(owned("shop", "alice", true, false, 5, "shop.Item")));
    assertTrue(registry.accepts(owned("shop", "alice", true, false, 7, "shop.Item")));
    assertTrue(registry.namespaceOf(Language.PYTHON, "shop.Item").isEmpty());
  }

  @Test
  void the_synced_revision_follows_whole_lists_and_only_the_next_single_change() {
    // run / verify
    registry.synced(1, false);
    registry.synced(3, false);
    assertEquals(1, registry.synced());
    registry.synced(2, false);
    assertEquals(2, registry.synced());
    registry.synced(9, true);
    registry.synced(4, true);
    assertEquals(9, registry.synced());
  }
}
