package io.dataclay.ds.registration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.Language;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.ObjectAlreadyExistsException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Group commit of registrations, against a Logic Module stand-in that records each request. */
@Timeout(30)
class GroupCommitRegistrarTest {
  private final FakeLogicModule lm = new FakeLogicModule();
  private GroupCommitRegistrar registrar;

  @AfterEach
  void stop() {
    lm.release.countDown();
    if (registrar != null) {
      registrar.close(Duration.ofSeconds(5));
    }
  }

  private static StoredObject object() {
    return new StoredObject(UUID.randomUUID(), ObjectHeader.of("app.Point", Language.PYTHON, "ann"), Map.of());
  }

  private static DataClayException failure(CompletableFuture<Void> f) {
    CompletionException e = assertThrows(CompletionException.class, f::join);
    return assertInstanceOf(DataClayException.class, e.getCause());
  }

  /** Starts {@link #registrar} and registers one group, whose request the Logic Module holds until released. */
  private CompletableFuture<Void> firstRequestHeld() throws InterruptedException {
    registrar = new GroupCommitRegistrar(lm);
    CompletableFuture<Void> first = registrar.register(List.of(object()), null, null);
    assertTrue(lm.arrived.await(5, TimeUnit.SECONDS));
    return first;
  }

  @Test
  void a_lone_group_is_registered_in_one_request_of_its_own() {
    // setup
    registrar = new GroupCommitRegistrar(lm);
    lm.release.countDown();
    StoredObject o = object();
    // run
    registrar.register(List.of(o), "home", o.id()).join();
    // verify
    assertEquals(1, lm.requests.size());
    assertEquals(List.of(new RegistrationGroup(List.of(o), "home", o.id())), lm.requests.get(0));
  }

  @Test
  void groups_arriving_while_a_request_is_out_go_together_in_the_next_one() throws Exception {
    // setup: the first request is held at the Logic Module
    CompletableFuture<Void> first = firstRequestHeld();
    List<CompletableFuture<Void>> later = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      later.add(registrar.register(List.of(object(), object()), null, null));
    }
    // run
    lm.release.countDown();
    first.join();
    later.forEach(CompletableFuture::join);
    // verify: one round trip for the five calls that waited
    assertEquals(2, lm.requests.size());
    assertEquals(1, lm.requests.get(0).size());
    assertEquals(5, lm.requests.get(1).size());
  }

  @Test
  void a_refused_group_fails_alone_and_the_others_of_its_request_are_registered() throws Exception {
    // setup
    CompletableFuture<Void> first = firstRequestHeld();
    StoredObject taken = object();
    lm.refused.add(taken.id());
    CompletableFuture<Void> before = registrar.register(List.of(object()), null, null);
    CompletableFuture<Void> bad = registrar.register(List.of(object(), taken), null, null);
    CompletableFuture<Void> after = registrar.register(List.of(object()), null, null);
    // run
    lm.release.countDown();
    // verify
    first.join();
    before.join();
    after.join();
    DataClayException e = failure(bad);
    assertInstanceOf(ObjectAlreadyExistsException.class, e);
    assertTrue(e.getMessage().contains(taken.id().toString()), e.getMessage());
    assertEquals(3, lm.requests.get(1).size());
  }

  @Test
  void a_group_larger_than_a_request_goes_alone_and_requests_stay_under_the_limit() throws Exception {
    // setup
    CompletableFuture<Void> first = firstRequestHeld();
    List<StoredObject> huge = new ArrayList<>();
    for (int i = 0; i < GroupCommitRegistrar.MAX_OBJECTS + 1; i++) {
      huge.add(object());
    }
    List<StoredObject> half = huge.subList(0, GroupCommitRegistrar.MAX_OBJECTS / 2 + 1);
    List<CompletableFuture<Void>> all = List.of(first, registrar.register(half, null, null),
        registrar.register(half.stream().map(o -> object()).toList(), null, null),
        registrar.register(huge, null, null));
    // run
    lm.release.countDown();
    all.forEach(CompletableFuture::join);
    // verify: the two halves cannot share a request, and the huge group is sent whole
    assertEquals(List.of(1, 1, 1, 1), lm.requests.stream().map(List::size).toList());
    assertEquals(GroupCommitRegistrar.MAX_OBJECTS + 1, lm.requests.get(3).get(0).objects().size());
  }

  @Test
  void a_logic_module_back_within_the_wait_registers_the_group() {
    // setup: two requests find it down
    registrar = new GroupCommitRegistrar(lm, Duration.ofSeconds(10));
    lm.release.countDown();
    lm.unavailable.set(2);
    // run
    registrar.register(List.of(object()), null, null).join();
    // verify
    assertEquals(3, lm.requests.size());
  }

  @Test
  void a_logic_module_unreachable_for_longer_than_the_wait_fails_the_call() {
    // setup
    registrar = new GroupCommitRegistrar(lm, Duration.ofMillis(300));
    lm.release.countDown();
    lm.unavailable.set(Integer.MAX_VALUE);
    long start = System.nanoTime();
    // run
    DataClayException e = failure(registrar.register(List.of(object()), null, null));
    // verify
    assertInstanceOf(BackendUnavailableException.class, e);
    assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(300));
    assertTrue(lm.requests.size() > 1, "it was not sent again");
  }

  @Test
  void a_registrar_whose_thread_dies_fails_its_calls_instead_of_leaving_them_waiting() {
    // setup: sending fails with an error no code expects (a class missing at run time)
    registrar = new GroupCommitRegistrar(lm);
    lm.broken.set(new NoClassDefFoundError("io/dataclay/proto/Missing"));
    lm.release.countDown();
    // run / verify: the call in flight and every later one fail at once
    assertInstanceOf(BackendUnavailableException.class, failure(registrar.register(List.of(object()), null, null)));
    assertInstanceOf(BackendUnavailableException.class, failure(registrar.register(List.of(object()), null, null)));
  }

  @Test
  void a_closed_registrar_takes_no_group_and_reports_whether_everything_was_answered() throws Exception {
    // setup: one request held at the Logic Module
    registrar = new GroupCommitRegistrar(lm);
    CompletableFuture<Void> held = registrar.register(List.of(object()), null, null);
    assertTrue(lm.arrived.await(5, TimeUnit.SECONDS));
    // run / verify: unanswered, the close is not clean
    assertFalse(registrar.close(Duration.ofMillis(100)));
    assertInstanceOf(BackendUnavailableException.class, failure(registrar.register(List.of(object()), null, null)));
    lm.release.countDown();
    held.join();
    assertTrue(registrar.close(Duration.ofSeconds(5)));
  }
}
