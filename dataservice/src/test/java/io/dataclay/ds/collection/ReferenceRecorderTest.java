package io.dataclay.ds.collection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.Language;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.NotAuthenticatedException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class ReferenceRecorderTest {
  private final ObjectStore store = ObjectStores.open(new StoreConfig("memory", null, 64L << 20));
  private final Session lm = session("lm-token", "_dataclay_system", true);
  private final Session ann = session("ann-token", "ann", false);
  private final Set<String> closed = new HashSet<>();
  private ReferenceRecorder recorder = recorder(ReferenceRecorder.DEFAULT_BUDGET);

  @AfterEach
  void close() {
    store.close();
  }

  private static Session session(String token, String user, boolean admin) {
    // the collector is the Logic Module: a backend session, not an administrator's
    return new Session(token, user, user, Set.of(user), Set.of(), Long.MAX_VALUE, false, admin, 0);
  }

  // sessions are checked on the calling thread, so a test sees the result of EndCollection's pruning at once
  private ReferenceRecorder recorder(long budget) {
    return new ReferenceRecorder(store, token -> {
      if (closed.contains(token)) {
        throw new NotAuthenticatedException("the session was closed");
      }
      return session(token, "someone", false);
    }, Runnable::run, budget);
  }

  private static StoredObject object(UUID id, UUID... references) {
    return new StoredObject(id, ObjectHeader.of("m.C", Language.PYTHON, "ann"),
        Map.of("f", new FieldValue(new byte[] {1}, List.of(references))));
  }

  private void persist(Session s, StoredObject... objects) {
    List<UUID> ids = new ArrayList<>();
    for (StoredObject o : objects) {
      ids.add(o.id());
    }
    recorder.held(s, ids);
    recorder.recordingStore().putAll(List.of(objects));
  }

  @Test
  void references_written_through_the_store_while_a_collection_is_open_are_recorded_and_only_those() {
    // setup
    ObjectStore writes = recorder.recordingStore();
    UUID a = UUID.randomUUID();
    UUID before = UUID.randomUUID();
    UUID during1 = UUID.randomUUID();
    UUID during2 = UUID.randomUUID();
    UUID during3 = UUID.randomUUID();
    UUID after = UUID.randomUUID();
    writes.put(object(a, before));
    // run
    recorder.begin(lm, 7);
    writes.putAll(List.of(object(UUID.randomUUID(), during1)));
    writes.put(object(UUID.randomUUID(), during2));
    writes.applyDelta(new ObjectDelta(a, Map.of("g", new FieldValue(new byte[0], List.of(during3))), Set.of()));
    ReferenceRecorder.Recorded recorded = recorder.end(lm, 7);
    writes.put(object(UUID.randomUUID(), after));
    recorder.begin(lm, 8);
    ReferenceRecorder.Recorded next = recorder.end(lm, 8);
    // verify: recorded, and written to the engine
    assertEquals(Set.of(during1, during2, during3), Set.copyOf(recorded.referenced()));
    assertEquals(List.of(), next.referenced());
    assertEquals(List.of(during3), store.get(a).orElseThrow().fields().get("g").references());
    assertEquals(4, store.count());
  }

  @Test
  void a_session_holds_what_it_made_persistent_created_or_used_until_it_is_closed() {
    // setup
    UUID made = UUID.randomUUID();
    UUID created = UUID.randomUUID();
    UUID used = UUID.randomUUID();
    UUID bobs = UUID.randomUUID();
    Session bob = session("bob-token", "bob", false);
    persist(ann, object(made));
    recorder.held(ann, List.of(created));
    recorder.used(ann, used);
    recorder.held(bob, List.of(bobs));
    // run
    recorder.begin(lm, 1);
    ReferenceRecorder.Recorded first = recorder.end(lm, 1);
    closed.add("bob-token");
    recorder.begin(lm, 2);
    recorder.end(lm, 2);
    recorder.begin(lm, 3);
    ReferenceRecorder.Recorded afterClose = recorder.end(lm, 3);
    // verify: bob's holdings are reported until EndCollection finds his session closed
    assertEquals(Set.of(made, created, used), Set.copyOf(first.held().get("ann-token")));
    assertEquals(List.of(bobs), first.held().get("bob-token"));
    assertEquals(Set.of("ann-token"), afterClose.held().keySet());
  }

  @Test
  void the_reference_graph_streams_every_stored_object_in_batches() {
    // setup
    int n = ReferenceRecorder.BATCH * 2 + 17;
    Map<UUID, UUID> expected = new HashMap<>();
    List<StoredObject> objects = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      UUID id = UUID.randomUUID();
      UUID target = UUID.randomUUID();
      expected.put(id, target);
      objects.add(object(id, target, target));
    }
    store.putAll(objects);
    recorder.begin(lm, 5);
    // run
    Map<UUID, Set<UUID>> seen = new HashMap<>();
    List<Integer> sizes = new ArrayList<>();
    Iterator<List<ReferenceRecorder.Outgoing>> batches = recorder.references(lm, 5);
    batches.forEachRemaining(b -> {
      sizes.add(b.size());
      b.forEach(o -> seen.put(o.id(), o.references()));
    });
    // verify
    assertEquals(List.of(ReferenceRecorder.BATCH, ReferenceRecorder.BATCH, 17), sizes);
    assertEquals(n, seen.size());
    expected.forEach((id, target) -> assertEquals(Set.of(target), seen.get(id)));
  }

  @Test
  void a_version_references_its_original_in_the_graph_and_when_written_during_a_collection() {
    // setup: a version stored before the collection, and one stored while it is open
    UUID original = UUID.randomUUID();
    UUID other = UUID.randomUUID();
    UUID field = UUID.randomUUID();
    UUID before = UUID.randomUUID();
    UUID during = UUID.randomUUID();
    ObjectStore writes = recorder.recordingStore();
    writes.put(version(before, original, field));
    recorder.begin(lm, 9);
    // run
    writes.put(version(during, other));
    Map<UUID, Set<UUID>> graph = new HashMap<>();
    recorder.references(lm, 9).forEachRemaining(b -> b.forEach(o -> graph.put(o.id(), o.references())));
    ReferenceRecorder.Recorded recorded = recorder.end(lm, 9);
    // verify: a kept version keeps the original it would consolidate into
    assertEquals(Set.of(field, original), graph.get(before));
    assertEquals(Set.of(other), Set.copyOf(recorded.referenced()));
  }

  private static StoredObject version(UUID id, UUID original, UUID... references) {
    return new StoredObject(id, new ObjectHeader("m.C", Language.PYTHON, "ann", original.toString(), null),
        Map.of("f", new FieldValue(new byte[] {1}, List.of(references))));
  }

  @Test
  void collection_steps_need_an_administrator_and_the_open_collection() {
    // setup
    recorder.begin(lm, 3);
    // verify
    assertThrows(PermissionDeniedException.class, () -> recorder.begin(ann, 4));
    assertThrows(PermissionDeniedException.class, () -> recorder.references(ann, 3));
    InvalidArgumentException wrong = assertThrows(InvalidArgumentException.class, () -> recorder.end(lm, 4));
    assertTrue(wrong.getMessage().contains("collection 3 is"), wrong.getMessage());
    assertThrows(InvalidArgumentException.class, () -> recorder.begin(lm, 0));
    recorder.end(lm, 3);
    assertThrows(InvalidArgumentException.class, () -> recorder.end(lm, 3));
  }

  @Test
  void a_write_in_progress_finishes_before_a_collection_begins() throws Exception {
    // setup: a write that started before the collection is stuck in the middle
    CountDownLatch writing = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean written = new AtomicBoolean();
    CompletableFuture<Void> stuck = CompletableFuture.runAsync(() ->
        recorder.gated(() -> { }, () -> {
          writing.countDown();
          awaitQuietly(release);
          written.set(true);
        }));
    assertTrue(writing.await(10, TimeUnit.SECONDS));
    // run
    CompletableFuture<Void> begin = CompletableFuture.runAsync(() -> recorder.begin(lm, 9));
    Thread.sleep(200);
    boolean begunWhileWriting = begin.isDone();
    release.countDown();
    begin.get(10, TimeUnit.SECONDS);
    // verify
    assertFalse(begunWhileWriting);
    assertTrue(written.get());
    stuck.get(10, TimeUnit.SECONDS);
  }

  @Test
  void only_deletions_by_the_collector_count_as_collected() {
    // setup
    recorder.begin(lm, 1);
    recorder.end(lm, 1);
    Session otherBackend = session("backend-token", "admin", true);
    // run
    recorder.deleted(lm, 3);
    recorder.deleted(otherBackend, 5);
    // verify
    assertEquals(3, recorder.collected());
  }

  @Test
  void holding_more_than_the_budget_suspends_collections_until_that_session_ends() {
    // setup
    recorder = recorder(3);
    recorder.used(ann, UUID.randomUUID());
    Session greedy = session("greedy-token", "greedy", false);
    for (int i = 0; i < 4; i++) {
      recorder.used(greedy, UUID.randomUUID());
    }
    // run
    recorder.begin(lm, 1);
    BackendUnavailableException refused = assertThrows(BackendUnavailableException.class, () -> recorder.end(lm, 1));
    closed.add("greedy-token");
    recorder.begin(lm, 2);
    assertThrows(BackendUnavailableException.class, () -> recorder.end(lm, 2));
    recorder.begin(lm, 3);
    ReferenceRecorder.Recorded after = recorder.end(lm, 3);
    // verify: the session that passed the budget is refused until the first EndCollection after it closed
    assertTrue(refused.getMessage().contains("hold more objects"), refused.getMessage());
    assertEquals(Set.of("ann-token"), after.held().keySet());
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
