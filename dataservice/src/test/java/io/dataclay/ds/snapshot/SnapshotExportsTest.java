package io.dataclay.ds.snapshot;

import static io.dataclay.ds.session.TestSessions.ADMIN;
import static io.dataclay.ds.session.TestSessions.BACKEND;
import static io.dataclay.ds.session.TestSessions.USER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.Language;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.ds.store.TestObjects;
import io.dataclay.ds.store.memory.MemoryStore;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A backend's snapshot: the freeze, and an export that shows the cut's state whatever writers do after it. */
@Timeout(60)
class SnapshotExportsTest {
  private static final String ID = "0123456789abcdef0123456789abcdef";

  @TempDir
  Path dir;
  private SnapshotStore store;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private final ExecutorService writers = Executors.newCachedThreadPool();
  private Set<UUID> staged = Set.of();

  @BeforeEach
  void open() {
    store = new SnapshotStore(MemoryStore.open(new StoreConfig("memory", dir, 1L << 30)));
  }

  @AfterEach
  void close() {
    writers.shutdownNow();
    timer.shutdownNow();
    store.close();
  }

  private SnapshotExports exports(long budget) {
    return new SnapshotExports(store, () -> staged, timer, budget);
  }

  @Test
  void theExportShowsTheCutThoughObjectsAreChangedRemovedCreatedAndReplacedAfterIt() {
    // setup: five objects, a replica and an object of another dataset
    List<UUID> ids = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      ids.add(UUID.randomUUID());
      store.put(TestObjects.object(ids.get(i), "v", "cut"));
    }
    UUID replica = UUID.randomUUID();
    store.put(new StoredObject(replica, new ObjectHeader("m.C", Language.PYTHON, "alice", null,
        UUID.randomUUID().toString()), Map.of()));
    UUID other = UUID.randomUUID();
    store.put(new StoredObject(other, ObjectHeader.of("m.C", Language.PYTHON, "bob"), TestObjects.object(other, "v",
        "cut").fields()));
    SnapshotExports exports = exports(1L << 30);
    exports.freeze(BACKEND, ID, 5000, "");
    exports.thaw(BACKEND, ID);
    // run: changes before the export starts, and more while it runs
    store.applyDelta(new ObjectDelta(ids.get(0), Map.of("v", TestObjects.value("after")), Set.of()));
    store.remove(ids.get(1));
    UUID born = UUID.randomUUID();
    store.put(TestObjects.object(born, "v", "after"));
    store.put(TestObjects.object(ids.get(2), "v", "after"));
    Iterator<StoredObject> it = exports.export(ADMIN, ID);
    Map<UUID, String> seen = new HashMap<>();
    StoredObject first = it.next();
    seen.put(first.id(), TestObjects.text(first.fields().get("v")));
    for (UUID id : ids) {
      if (store.header(id).isPresent()) {
        store.applyDelta(new ObjectDelta(id, Map.of("v", TestObjects.value("later")), Set.of()));
      }
    }
    store.remove(other);
    it.forEachRemaining(o -> seen.put(o.id(), TestObjects.text(o.fields().get("v"))));
    // verify: every master copy as of the cut, nothing created after it, no replica; the writes went through
    Map<UUID, String> expected = new HashMap<>();
    ids.forEach(id -> expected.put(id, "cut"));
    expected.put(other, "cut");
    assertEquals(expected, seen);
    assertEquals("later", TestObjects.text(store.get(ids.get(0)).orElseThrow().fields().get("v")));
    assertFalse(store.header(ids.get(1)).isPresent());
  }

  @Test
  void aDatasetSnapshotLeavesOutOtherDatasetsAndObjectsStagedByImports() {
    // setup
    UUID mine = UUID.randomUUID();
    UUID stagedOne = UUID.randomUUID();
    UUID theirs = UUID.randomUUID();
    store.put(TestObjects.object(mine, "v", "x"));
    store.put(TestObjects.object(stagedOne, "v", "x"));
    store.put(new StoredObject(theirs, ObjectHeader.of("m.C", Language.PYTHON, "bob"), Map.of()));
    staged = Set.of(stagedOne);
    SnapshotExports exports = exports(1L << 30);
    // run
    exports.freeze(BACKEND, ID, 5000, "alice");
    List<UUID> out = new ArrayList<>();
    exports.export(ADMIN, ID).forEachRemaining(o -> out.add(o.id()));
    // verify
    assertEquals(List.of(mine), out);
  }

  @Test
  void concurrentWritersNeverShowTheExporterAStateLaterThanTheCut() throws Exception {
    // setup: 300 objects rewritten by four writers without pause, each writer its own quarter
    List<UUID> ids = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      ids.add(UUID.randomUUID());
      store.put(TestObjects.object(ids.get(i), "v", "0"));
    }
    AtomicBoolean stop = new AtomicBoolean();
    List<CompletableFuture<Void>> running = new ArrayList<>();
    for (int w = 0; w < 4; w++) {
      int writer = w;
      running.add(CompletableFuture.runAsync(() -> {
        for (long n = 1; !stop.get(); n++) {
          UUID id = ids.get((int) ((n * 4 + writer) % ids.size()));
          if (n % 50 == 0) {
            store.remove(id);
            store.put(TestObjects.object(id, "v", writer + ":" + n));
          } else {
            store.applyDelta(new ObjectDelta(id, Map.of("v", TestObjects.value(writer + ":" + n)), Set.of()));
          }
        }
      }, writers));
    }
    Thread.sleep(100);
    SnapshotExports exports = exports(1L << 30);
    // run: the freeze returns with the gate closed: what the store holds then is the cut
    exports.freeze(BACKEND, ID, 5000, "");
    Map<UUID, String> atCut = new HashMap<>();
    store.inner().forEachId(id -> atCut.put(id, TestObjects.text(store.get(id).orElseThrow().fields().get("v"))));
    exports.thaw(BACKEND, ID);
    Map<UUID, String> exported = new HashMap<>();
    Iterator<StoredObject> it = exports.export(ADMIN, ID);
    while (it.hasNext()) {
      StoredObject o = it.next();
      exported.put(o.id(), TestObjects.text(o.fields().get("v")));
      if (exported.size() % 10 == 0) {
        Thread.sleep(2); // a slow reader: the writers change most objects before it reaches them
      }
    }
    stop.set(true);
    for (CompletableFuture<Void> w : running) {
      w.get(10, TimeUnit.SECONDS);
    }
    // verify: the same objects, each with its state at the cut
    assertEquals(atCut.keySet(), exported.keySet());
    List<String> later = new ArrayList<>();
    atCut.forEach((id, value) -> {
      if (!value.equals(exported.get(id))) {
        later.add(id + ": " + value + " at the cut, exported " + exported.get(id));
      }
    });
    assertEquals(List.of(), later.subList(0, Math.min(5, later.size())), later.size() + " objects exported late");
  }

  @Test
  void keptStatesPastTheBudgetFailTheExportAndNeverTheWriters() {
    // setup
    List<UUID> ids = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      ids.add(UUID.randomUUID());
      store.put(TestObjects.object(ids.get(i), "v", "x".repeat(1000)));
    }
    SnapshotExports exports = exports(10_000);
    exports.freeze(BACKEND, ID, 5000, "");
    exports.thaw(BACKEND, ID);
    // run: every object changes before the export reads it
    for (UUID id : ids) {
      store.applyDelta(new ObjectDelta(id, Map.of("v", TestObjects.value("y")), Set.of()));
    }
    Iterator<StoredObject> it = exports.export(ADMIN, ID);
    // verify
    BackendUnavailableException e = assertThrows(BackendUnavailableException.class, () -> it.forEachRemaining(o -> { }));
    assertTrue(e.getMessage().contains("the export was given up"), e.getMessage());
    assertEquals("y", TestObjects.text(store.get(ids.get(49)).orElseThrow().fields().get("v")));
  }

  @Test
  void theGateOpensByItselfAfterTheHoldAndWritesMayNotRunInlineMeanwhile() throws Exception {
    // setup
    SnapshotExports exports = exports(1L << 30);
    UUID id = UUID.randomUUID();
    assertTrue(store.writesWithoutWaiting());
    // run: a freeze nobody thaws
    exports.freeze(BACKEND, ID, 300, "");
    long started = System.nanoTime();
    boolean inlineWhileFrozen = store.writesWithoutWaiting();
    store.put(TestObjects.object(id, "v", "x"));
    long waitedMs = (System.nanoTime() - started) / 1_000_000;
    // verify
    assertFalse(inlineWhileFrozen);
    assertTrue(waitedMs >= 250 && waitedMs < 5000, "waited " + waitedMs + " ms");
    assertTrue(store.writesWithoutWaiting());
  }

  @Test
  void onlyBackendsFreezeAndOnlyAdministratorsExport() {
    SnapshotExports exports = exports(1L << 30);
    assertThrows(PermissionDeniedException.class, () -> exports.freeze(ADMIN, ID, 1000, ""));
    assertThrows(PermissionDeniedException.class, () -> exports.freeze(USER, ID, 1000, ""));
    exports.freeze(BACKEND, ID, 1000, "");
    exports.thaw(BACKEND, ID);
    assertThrows(PermissionDeniedException.class, () -> exports.export(USER, ID));
    assertThrows(PermissionDeniedException.class, () -> exports.export(BACKEND, ID));
    assertThrows(io.dataclay.exceptions.InvalidArgumentException.class,
        () -> exports.export(ADMIN, "ffffffffffffffffffffffffffffffff"));
    exports.export(ADMIN, ID);
    assertThrows(io.dataclay.exceptions.InvalidArgumentException.class, () -> exports.export(ADMIN, ID));
  }
}
