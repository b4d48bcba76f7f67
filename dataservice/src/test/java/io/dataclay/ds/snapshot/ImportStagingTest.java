package io.dataclay.ds.snapshot;

import static io.dataclay.ds.session.TestSessions.ADMIN;
import static io.dataclay.ds.session.TestSessions.BACKEND;
import static io.dataclay.ds.session.TestSessions.USER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.Language;
import io.dataclay.ds.replication.ObjectCopy;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.ds.store.TestObjects;
import io.dataclay.ds.store.memory.MemoryStore;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.ObjectAlreadyExistsException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Staged imports: kept when the Logic Module commits, removed otherwise, also after a crash. */
@Timeout(60)
class ImportStagingTest {
  private static final String IMPORT = "00112233445566778899aabbccddeeff";

  @TempDir
  Path dir;
  private ObjectStore store;
  private final UUID self = UUID.randomUUID();
  private final AtomicReference<ImportStaging.State> lm = new AtomicReference<>(ImportStaging.State.OPEN);
  private final Map<UUID, Set<String>> replicaSets = new java.util.concurrent.ConcurrentHashMap<>();
  private final List<UUID> evicted = new ArrayList<>();
  private final ImportStaging.Replicas replicas = new ImportStaging.Replicas() {
    @Override
    public void set(UUID id, Set<String> backends) {
      replicaSets.put(id, backends);
    }

    @Override
    public void forget(java.util.Collection<UUID> ids) {
      ids.forEach(replicaSets::remove);
    }
  };

  @BeforeEach
  void open() {
    store = new SnapshotStore(MemoryStore.open(new StoreConfig("memory", dir, 1L << 30)));
  }

  @AfterEach
  void close() {
    store.close();
  }

  private ImportStaging staging() {
    return new ImportStaging(store, dir.resolve("imports"), self, id -> lm.get(), evicted::addAll, replicas);
  }

  private List<ObjectCopy> objects(int n) {
    List<ObjectCopy> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(new ObjectCopy(TestObjects.object(UUID.randomUUID(), "v", "imported"), Set.of()));
    }
    return out;
  }

  @Test
  void aCommittedImportKeepsItsObjectsAndAGivenUpOneLeavesNothing() {
    // setup: ten master copies, one of them with a replica on another backend
    ImportStaging staging = staging();
    String other = UUID.randomUUID().toString();
    List<ObjectCopy> batch = new ArrayList<>(objects(9));
    ObjectCopy replicated = new ObjectCopy(TestObjects.object(UUID.randomUUID(), "v", "imported"), Set.of(other));
    batch.add(replicated);
    staging.open(ADMIN, IMPORT);
    staging.stage(IMPORT, batch, "data");
    assertEquals(Map.of(), replicaSets);
    // run: prepared, then committed
    List<List<ObjectCopy>> headers = staging.prepare(BACKEND, IMPORT);
    // verify: from the prepare on, the master passes changes to its replica
    assertEquals(Map.of(replicated.object().id(), Set.of(other)), replicaSets);
    assertTrue(headers.get(0).contains(new ObjectCopy(new StoredObject(replicated.object().id(),
        replicated.object().header(), Map.of()), Set.of(other))));
    staging.finish(BACKEND, IMPORT, true);
    // verify
    assertEquals(10, headers.get(0).size());
    assertEquals(10, store.count());
    assertEquals(Map.of(replicated.object().id(), Set.of(other)), replicaSets);
    assertFalse(Files.exists(dir.resolve("imports").resolve(IMPORT + ".staged")));
    // run: another import, given up
    String second = "ffeeddccbbaa99887766554433221100";
    staging.open(ADMIN, second);
    List<ObjectCopy> given = objects(5);
    given.set(0, new ObjectCopy(given.get(0).object(), Set.of(other)));
    staging.stage(second, given, "data");
    staging.prepare(BACKEND, second);
    staging.finish(BACKEND, second, false);
    // verify: only the first import's objects are left, and only its replica set
    assertEquals(10, store.count());
    assertEquals(5, evicted.size());
    assertEquals(Set.of(replicated.object().id()), replicaSets.keySet());
  }

  @Test
  void afterACrashObjectsOfImportsThatDidNotCommitAreRemovedAndCommittedOnesKept() throws Exception {
    // setup: two imports staged, then the backend "dies" (its staging object is dropped)
    String kept = "11111111111111111111111111111111";
    ImportStaging before = staging();
    before.open(ADMIN, IMPORT);
    before.stage(IMPORT, objects(7), "data");
    before.open(ADMIN, kept);
    before.stage(kept, objects(3), "data");
    before.prepare(BACKEND, kept);
    // a torn append: half an ID after the last synced line
    Files.writeString(dir.resolve("imports").resolve(IMPORT + ".staged"), "0123-45",
        java.nio.file.StandardOpenOption.APPEND);
    // run: the Logic Module committed the prepared one only
    staging(id -> id.equals(kept) ? ImportStaging.State.COMMITTED : ImportStaging.State.UNKNOWN).recover();
    // verify
    assertEquals(3, store.count());
    try (var files = Files.list(dir.resolve("imports"))) {
      assertEquals(0, files.count());
    }
  }

  @Test
  void aPreparedImportIsKeptUntilTheLogicModuleDecides() throws Exception {
    // setup: prepared, then the backend "dies"; the Logic Module is still committing
    ImportStaging first = staging();
    first.open(ADMIN, IMPORT);
    first.stage(IMPORT, objects(4), "data");
    first.prepare(BACKEND, IMPORT);
    AtomicInteger asked = new AtomicInteger();
    ImportStaging restarted = staging(id -> asked.incrementAndGet() < 3 ? ImportStaging.State.OPEN
        : ImportStaging.State.COMMITTED);
    // run
    CompletableFuture.runAsync(() -> {
      try {
        restarted.recover();
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    }).get(20, TimeUnit.SECONDS);
    // verify: it waited for the answer, and kept them
    assertTrue(asked.get() >= 3);
    assertEquals(4, store.count());
  }

  @Test
  void stagingRefusesWhatAnImportMayNotDo() {
    ImportStaging staging = staging();
    assertThrows(PermissionDeniedException.class, () -> staging.open(USER, IMPORT));
    assertThrows(PermissionDeniedException.class, () -> staging.open(BACKEND, IMPORT));
    lm.set(ImportStaging.State.UNKNOWN);
    assertThrows(InvalidArgumentException.class, () -> staging.open(ADMIN, IMPORT));
    lm.set(ImportStaging.State.OPEN);
    assertThrows(InvalidArgumentException.class, () -> staging.open(ADMIN, "not-an-id"));
    staging.open(ADMIN, IMPORT);
    StoredObject resident = TestObjects.object(UUID.randomUUID(), "v", "here");
    store.put(resident);
    assertThrows(ObjectAlreadyExistsException.class,
        () -> staging.stage(IMPORT, List.of(new ObjectCopy(resident, Set.of())), "data"));
    StoredObject selfReplica = new StoredObject(UUID.randomUUID(), new ObjectHeader("m.C", Language.PYTHON, "alice",
        null, self.toString()), Map.of());
    assertThrows(InvalidArgumentException.class,
        () -> staging.stage(IMPORT, List.of(new ObjectCopy(selfReplica, Set.of())), "data"));
    StoredObject master = TestObjects.object(UUID.randomUUID(), "v", "m");
    assertThrows(InvalidArgumentException.class,
        () -> staging.stage(IMPORT, List.of(new ObjectCopy(master, Set.of(self.toString()))), "data"));
    assertThrows(PermissionDeniedException.class, () -> staging.prepare(ADMIN, IMPORT));
    assertEquals(1, store.count());
  }

  private ImportStaging staging(ImportStaging.ImportStates states) {
    return new ImportStaging(store, dir.resolve("imports"), self, states, evicted::addAll, replicas);
  }
}
