package io.dataclay.ds.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.Language;
import io.dataclay.exceptions.BackendUnavailableException;
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

/** A backend waits for its start-up models instead of refusing, and fetches a model it missed before refusing. */
@Timeout(30)
class ClassAvailabilityTest {
  private final ModelRegistry registry = new ModelRegistry();

  /** Availability whose start-up install is done, over an empty registry. */
  static ClassAvailability installed() {
    ClassAvailability a = new ClassAvailability(new ModelRegistry(), 1000);
    a.markInstalled();
    return a;
  }

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
    assertFalse(classes.isKnownNow(Language.PYTHON, "people.Person"));
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
}
