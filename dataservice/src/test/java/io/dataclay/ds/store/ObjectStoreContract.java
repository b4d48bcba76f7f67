package io.dataclay.ds.store;

import static io.dataclay.ds.store.TestObjects.object;
import static io.dataclay.ds.store.TestObjects.putNumbered;
import static io.dataclay.ds.store.TestObjects.tagOf;
import static io.dataclay.ds.store.TestObjects.tagged;
import static io.dataclay.ds.store.TestObjects.text;
import static io.dataclay.ds.store.TestObjects.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dataclay.common.Language;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.exceptions.StoreFullException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What every store engine must do: each engine's test extends this class and passes it whole
 * (the ZODB / Ratis way), describing its engine with an {@link EngineUnderTest}. Engines that keep
 * nothing across a restart say so ({@link EngineUnderTest#notDurable()}) and skip only the
 * durability tests; engines without a fixed capacity say so ({@link EngineUnderTest#unbounded()})
 * and skip only the full-pool tests. Each test gets its own pool
 * directory under /dev/shm, removed afterwards.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class ObjectStoreContract {
  /** The pool directory of the current test. */
  protected Path poolDir;
  /** The store under test, open on {@link #poolDir}. */
  protected ObjectStore store;
  private final EngineUnderTest engine;

  /** The contract for {@code engine}. */
  protected ObjectStoreContract(EngineUnderTest engine) {
    this.engine = engine;
  }

  /** The engine's configuration name. */
  protected final String engine() {
    return engine.name();
  }

  /** Whether the engine keeps its objects across close and reopen. */
  protected final boolean durable() {
    return engine.durable();
  }

  /** Whether every acknowledged write survives a SIGKILL (durable and crash-consistent at return). */
  protected final boolean crashConsistent() {
    return engine.crashConsistent();
  }

  /**
   * Whether the engine promises durability only at checkpoints (2lm): every write acknowledged
   * before the last completed {@link ObjectStore#checkpoint()} survives a SIGKILL, and no object
   * is torn.
   */
  protected boolean durableAtCheckpoint() {
    return durable() && !crashConsistent();
  }

  /** Whether the pool has a fixed capacity that writes can exhaust. */
  protected final boolean bounded() {
    return engine.bounded();
  }

  /** Whether a removed object's bytes are overwritten in the pool (the pmem engines; postgres cannot). */
  protected boolean erasesRemovedObjects() {
    return bounded();
  }

  /** Pool size for the tests. */
  protected long poolSize() {
    return 128L << 20;
  }

  /** Pool size for the full-pool tests: small, so filling it is quick. */
  protected long smallPoolSize() {
    return 32L << 20;
  }

  /** The configuration of the engine on pool directory {@code path} with {@code size}. */
  protected StoreConfig config(Path path, long size) {
    return engine.settings().apply(new StoreConfig(engine(), path, size));
  }

  /** Opens the engine on the test's pool directory with {@code size}. */
  protected ObjectStore open(long size) {
    return ObjectStores.open(config(poolDir, size));
  }

  /**
   * The engine's own store under the layers {@link ObjectStores} puts over it, for tests of what
   * only that engine has (its counters, its crash points).
   */
  protected ObjectStore engineUnder(ObjectStore opened) {
    ObjectStore s = opened;
    while (s instanceof ForwardingStore layer) {
      s = layer.inner;
    }
    return s;
  }

  @BeforeEach
  void openStore() {
    poolDir = TestPools.newPath();
    store = open(poolSize());
  }

  @AfterEach
  void closeStoreAndRemovePool() {
    try {
      store.close();
    } finally {
      TestPools.delete(poolDir);
    }
  }

  @Test
  void putThenGetReturnsAnEqualObjectWithFieldsInOrder() {
    // setup
    UUID id = UUID.randomUUID();
    StoredObject person = object(id, "name", "Ada", "age", "36", "city", "London");
    // run
    store.put(person);
    // verify
    StoredObject got = store.get(id).orElseThrow();
    assertEquals(List.of("name", "age", "city"), List.copyOf(got.fields().keySet()));
    assertSameObject(person, got);
  }

  @Test
  void referencesAreThoseOfEveryFieldEachOnceInFieldOrder() {
    // setup: a small field and a large one (out of line in heap, read in place in kv) share a reference
    UUID id = UUID.randomUUID();
    UUID a = UUID.randomUUID();
    UUID b = UUID.randomUUID();
    UUID c = UUID.randomUUID();
    store.put(object(id, Map.of("x", new FieldValue(value("1").value(), List.of(a, b)))));
    Map<String, FieldValue> fields = new LinkedHashMap<>();
    fields.put("first", new FieldValue(value("1").value(), List.of(b, a)));
    fields.put("big", new FieldValue(new byte[256 * 1024], List.of(c, b)));
    fields.put("plain", value("no references"));
    store.put(new StoredObject(id, TestObjects.HEADER, fields));
    UUID none = UUID.randomUUID();
    store.put(object(none, "n", "1"));
    // run + verify: after a replacement, the new fields' references only
    assertEquals(List.of(b, a, c), List.copyOf(store.references(id).orElseThrow()));
    assertEquals(Set.of(), store.references(none).orElseThrow());
    assertEquals(Optional.empty(), store.references(UUID.randomUUID()));
  }

  @Test
  void getAndHeaderOfAnUnknownObjectAreEmpty() {
    store.put(object(UUID.randomUUID(), "a", "1"));
    assertEquals(Optional.empty(), store.get(UUID.randomUUID()));
    assertEquals(Optional.empty(), store.header(UUID.randomUUID()));
  }

  @Test
  void headerReturnsTheStoredHeaderWithVersionAndMaster() {
    // setup
    UUID id = UUID.randomUUID();
    ObjectHeader header = new ObjectHeader("app.Counter", Language.JAVA, "bob", UUID.randomUUID().toString(), "backend-7");
    // run
    store.put(new StoredObject(id, header, Map.of("n", value("1"))));
    // verify
    assertEquals(header, store.header(id).orElseThrow());
    assertEquals(header, store.get(id).orElseThrow().header());
  }

  @Test
  void removeDeletesTheObjectAndSaysWhetherItWasStored() {
    UUID id = UUID.randomUUID();
    UUID other = UUID.randomUUID();
    store.put(object(id, "a", "1"));
    store.put(object(other, "a", "2"));

    assertTrue(store.remove(id));
    assertFalse(store.remove(id));

    assertEquals(Optional.empty(), store.get(id));
    assertEquals(Optional.empty(), store.header(id));
    assertEquals("2", text(store.get(other).orElseThrow().fields().get("a")));
    assertEquals(1, store.count());
  }

  @Test
  void aRemovedObjectsBytesAreOverwrittenInThePool() {
    assumeTrue(erasesRemovedObjects(), "the engine cannot overwrite what it removes (see its documentation)");
    // setup: a small and a large value carrying a marker, made durable
    byte[] marker = ("removed-" + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8);
    UUID id = UUID.randomUUID();
    store.put(object(id, Map.of("small", FieldValue.of(marker.clone()), "large",
        FieldValue.of(TestPools.repeated(marker, 400)))));
    store.checkpoint();
    assertEquals(!store.stats().encrypted(), TestPools.filesContain(poolDir, marker), "marker in the pool in clear");
    // run
    assertTrue(store.remove(id));
    // verify
    assertFalse(TestPools.filesContain(poolDir, marker), "the removed object's bytes are still in the pool");
    assertTrue(store.get(id).isEmpty());
  }

  @Test
  void countAndForEachIdReflectTheStoredObjects() {
    // setup
    Set<UUID> ids = putNumbered(store, 2500);
    UUID removed = ids.iterator().next();
    store.remove(removed);
    ids.remove(removed);
    // run
    Set<UUID> seen = new HashSet<>();
    store.forEachId(seen::add);
    // verify
    assertEquals(ids, seen);
    assertEquals(ids.size(), store.count());
    assertEquals(ids.size(), store.stats().objects());
  }

  @Test
  void putReplacesTheWholeObject() {
    UUID id = UUID.randomUUID();
    store.put(object(id, "a", "1", "b", "2"));

    store.put(new StoredObject(id, ObjectHeader.of("model.Other", Language.PYTHON, "carol"), Map.of("c", value("3"))));

    StoredObject got = store.get(id).orElseThrow();
    assertEquals(List.of("c"), List.copyOf(got.fields().keySet()));
    assertEquals("3", text(got.fields().get("c")));
    assertEquals("model.Other", store.header(id).orElseThrow().className());
    assertEquals(1, store.count());
  }

  @Test
  void applyDeltaReplacesChangedFieldsDropsRemovedOnesAndKeepsTheRest() {
    // setup
    UUID id = UUID.randomUUID();
    store.put(object(id, "a", "1", "b", "2", "c", "3", "d", "4"));
    Map<String, FieldValue> changed = new LinkedHashMap<>();
    changed.put("c", value("three, now longer"));
    changed.put("e", value("5"));
    // run
    store.applyDelta(new ObjectDelta(id, changed, Set.of("b", "not-there")));
    // verify
    StoredObject got = store.get(id).orElseThrow();
    assertEquals(List.of("a", "c", "d", "e"), List.copyOf(got.fields().keySet()));
    assertEquals("1", text(got.fields().get("a")));
    assertEquals("three, now longer", text(got.fields().get("c")));
    assertEquals("4", text(got.fields().get("d")));
    assertEquals("5", text(got.fields().get("e")));
    assertEquals(TestObjects.HEADER, store.header(id).orElseThrow());
  }

  @Test
  void applyDeltaOfSameSizedValuesChangesOnlyThoseFields() {
    UUID id = UUID.randomUUID();
    UUID ref = UUID.randomUUID();
    store.put(object(id, Map.of("n", new FieldValue("0001".getBytes(StandardCharsets.UTF_8), List.of(ref)))));

    for (int i = 2; i <= 50; i++) {
      String n = String.format("%04d", i);
      store.applyDelta(new ObjectDelta(id, Map.of("n", new FieldValue(n.getBytes(StandardCharsets.UTF_8), List.of(ref))), Set.of()));
    }

    FieldValue n = store.get(id).orElseThrow().fields().get("n");
    assertEquals("0050", text(n));
    assertEquals(List.of(ref), n.references());
  }

  @Test
  void applyDeltaThatGrowsAndShrinksAnObjectKeepsEveryOtherField() {
    UUID id = UUID.randomUUID();
    store.put(object(id, "head", "h", "body", "x", "tail", "t"));

    for (int size : new int[] {10, 1_000, 100_000, 70_000, 5, 300_000, 1}) {
      store.applyDelta(new ObjectDelta(id, Map.of("body", value("y".repeat(size))), Set.of()));
      StoredObject got = store.get(id).orElseThrow();
      assertEquals(List.of("head", "body", "tail"), List.copyOf(got.fields().keySet()));
      assertEquals(size, got.fields().get("body").value().length);
      assertEquals("h", text(got.fields().get("head")));
      assertEquals("t", text(got.fields().get("tail")));
    }
  }

  @Test
  void applyDeltaOnAMissingObjectFailsAndStoresNothing() {
    UUID id = UUID.randomUUID();

    assertThrows(ObjectDoesNotExistException.class,
        () -> store.applyDelta(new ObjectDelta(id, Map.of("a", value("1")), Set.of())));

    assertEquals(Optional.empty(), store.get(id));
    assertEquals(0, store.count());
  }

  @Test
  void applyDeltaThatChangesAndRemovesOneFieldIsRefusedAndChangesNothing() {
    UUID id = UUID.randomUUID();
    store.put(object(id, "a", "1"));

    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> store.applyDelta(new ObjectDelta(id, Map.of("a", value("2")), Set.of("a"))));

    assertTrue(e.getMessage().contains("'a'"), e.getMessage());
    assertEquals("1", text(store.get(id).orElseThrow().fields().get("a")));
  }

  @Test
  void largeObjectOf16MiBRoundTripsAndTakesASmallDelta() {
    // setup
    UUID id = UUID.randomUUID();
    byte[] big = new byte[16 << 20];
    new Random(7).nextBytes(big);
    Map<String, FieldValue> fields = new LinkedHashMap<>();
    fields.put("blob", FieldValue.of(big.clone()));
    fields.put("counter", value("00"));
    // run
    store.put(object(id, fields));
    store.applyDelta(new ObjectDelta(id, Map.of("counter", value("01")), Set.of()));
    store.applyDelta(new ObjectDelta(id, Map.of("counter", value("002")), Set.of()));
    // verify
    StoredObject got = store.get(id).orElseThrow();
    assertArrayEquals(big, got.fields().get("blob").value());
    assertEquals("002", text(got.fields().get("counter")));
  }

  @Test
  void emptyObjectsAndEmptyValuesRoundTrip() {
    UUID empty = UUID.randomUUID();
    UUID blanks = UUID.randomUUID();
    ObjectHeader blankHeader = ObjectHeader.of("", Language.PYTHON, "");

    store.put(new StoredObject(empty, TestObjects.HEADER, Map.of()));
    store.put(new StoredObject(blanks, blankHeader, Map.of("nothing", FieldValue.of(new byte[0]))));

    assertEquals(Map.of(), store.get(empty).orElseThrow().fields());
    StoredObject got = store.get(blanks).orElseThrow();
    assertEquals(blankHeader, got.header());
    assertEquals(0, got.fields().get("nothing").value().length);
    store.applyDelta(new ObjectDelta(empty, Map.of("x", value("1")), Set.of()));
    store.applyDelta(new ObjectDelta(empty, Map.of(), Set.of("x")));
    assertEquals(Map.of(), store.get(empty).orElseThrow().fields());
  }

  @Test
  void referencesAndUnicodeNamesArePreserved() {
    UUID id = UUID.randomUUID();
    List<UUID> refs = List.of(UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID());
    Map<String, FieldValue> fields = new LinkedHashMap<>();
    fields.put("friends", new FieldValue(value("[..]").value(), refs));
    fields.put("naïve ✓", value("ü"));
    store.put(object(id, fields));

    store.applyDelta(new ObjectDelta(id, Map.of("naïve ✓", value("üü")), Set.of()));

    StoredObject got = store.get(id).orElseThrow();
    assertEquals(refs, got.fields().get("friends").references());
    assertEquals("üü", text(got.fields().get("naïve ✓")));
  }

  @Test
  void putAllStoresEveryObject() {
    List<StoredObject> batch = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      batch.add(object(UUID.randomUUID(), "i", Integer.toString(i)));
    }
    UUID existing = batch.get(0).id();
    store.put(object(existing, "old", "yes"));

    store.putAll(batch);

    assertEquals(100, store.count());
    for (StoredObject o : batch) {
      assertSameObject(o, store.get(o.id()).orElseThrow());
    }
  }

  @Test
  void putAllWithAnInvalidObjectStoresNoneOfTheBatch() {
    // setup
    UUID existing = UUID.randomUUID();
    store.put(object(existing, "v", "before"));
    Map<String, FieldValue> nullName = new HashMap<>();
    nullName.put(null, value("x"));
    List<StoredObject> batch = List.of(object(existing, "v", "after"), object(UUID.randomUUID(), "v", "new"),
        object(UUID.randomUUID(), nullName));
    // run
    assertThrows(InvalidArgumentException.class, () -> store.putAll(batch));
    UUID dup = UUID.randomUUID();
    assertThrows(InvalidArgumentException.class,
        () -> store.putAll(List.of(object(dup, "v", "1"), object(existing, "v", "x"), object(dup, "v", "2"))));
    // verify
    assertEquals(1, store.count());
    assertEquals("before", text(store.get(existing).orElseThrow().fields().get("v")));
  }

  @Test
  void invalidInputIsRefusedWithAnErrorNamingIt() {
    UUID id = UUID.randomUUID();
    store.put(object(id, "a", "1"));
    Map<String, FieldValue> emptyName = Map.of("", value("x"));
    Map<String, FieldValue> nullValue = new HashMap<>();
    nullValue.put("a", null);

    assertThrows(InvalidArgumentException.class, () -> store.put(null));
    assertThrows(InvalidArgumentException.class, () -> store.putAll(null));
    assertThrows(InvalidArgumentException.class, () -> store.putAll(Arrays.asList(object(id, "a", "2"), null)));
    assertThrows(InvalidArgumentException.class, () -> store.get(null));
    assertThrows(InvalidArgumentException.class, () -> store.header(null));
    assertThrows(InvalidArgumentException.class, () -> store.remove(null));
    assertThrows(InvalidArgumentException.class, () -> store.applyDelta(null));
    assertThrows(InvalidArgumentException.class, () -> store.forEachId(null));
    InvalidArgumentException empty = assertThrows(InvalidArgumentException.class, () -> store.put(object(id, emptyName)));
    assertTrue(empty.getMessage().contains(id.toString()), empty.getMessage());
    InvalidArgumentException missing = assertThrows(InvalidArgumentException.class, () -> store.put(object(id, nullValue)));
    assertTrue(missing.getMessage().contains("'a'"), missing.getMessage());
    assertThrows(InvalidArgumentException.class, () -> store.applyDelta(new ObjectDelta(id, nullValue, Set.of())));

    assertEquals("1", text(store.get(id).orElseThrow().fields().get("a")));
    assertEquals(1, store.count());
  }

  @Test
  void arraysHandedOverOrReturnedAreNotSharedWithTheStore() {
    UUID id = UUID.randomUUID();
    byte[] given = "original".getBytes(StandardCharsets.UTF_8);
    store.put(object(id, Map.of("v", FieldValue.of(given))));

    given[0] = 'X';
    store.get(id).orElseThrow().fields().get("v").value()[1] = 'Y';

    assertEquals("original", text(store.get(id).orElseThrow().fields().get("v")));
  }

  @Test
  void concurrentWritersAndReadersSeeOnlyWholeWrittenStates() throws Exception {
    // setup: 4 objects shared by 8 writers, one private object each, 2 readers checking tearing
    int writers = 8;
    int writes = 300;
    List<UUID> shared = List.of(UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID());
    for (UUID id : shared) {
      store.put(tagged(id, TestObjects.tag("init", 0, 5, false)));
    }
    Set<String> written = ConcurrentHashMap.newKeySet();
    written.add(TestObjects.tag("init", 0, 5, false));
    UUID[] own = new UUID[writers];
    String[] lastOwn = new String[writers];
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    AtomicBoolean writing = new AtomicBoolean(true);
    for (int w = 0; w < writers; w++) {
      int writer = w;
      own[w] = UUID.randomUUID();
      threads.add(new Thread(() -> {
        Random rng = new Random(writer);
        try {
          for (int i = 1; i <= writes; i++) {
            UUID target = rng.nextBoolean() ? own[writer] : shared.get(rng.nextInt(shared.size()));
            String tag = TestObjects.tag("t" + writer, i, rng.nextInt(4) == 0 ? 20_000 : rng.nextInt(200), i % 3 == 0);
            written.add(tag);
            if (target.equals(own[writer]) && lastOwn[writer] == null || rng.nextBoolean()) {
              store.put(tagged(target, tag));
            } else {
              store.applyDelta(TestObjects.taggedDelta(target, tag));
            }
            if (target.equals(own[writer])) {
              lastOwn[writer] = tag;
            }
          }
        } catch (Throwable t) {
          failures.add(t);
        }
      }));
    }
    for (int r = 0; r < 2; r++) {
      threads.add(new Thread(() -> {
        try {
          while (writing.get()) {
            for (UUID id : shared) {
              assertTrue(written.contains(tagOf(store.get(id).orElseThrow())));
            }
          }
        } catch (Throwable t) {
          failures.add(t);
        }
      }));
    }
    // run
    threads.forEach(Thread::start);
    for (Thread t : threads.subList(0, writers)) {
      t.join();
    }
    writing.set(false);
    for (Thread t : threads) {
      t.join();
    }
    // verify
    assertEquals(List.of(), failures);
    for (UUID id : shared) {
      assertTrue(written.contains(tagOf(store.get(id).orElseThrow())), "state of shared object " + id);
    }
    for (int w = 0; w < writers; w++) {
      if (lastOwn[w] != null) {
        assertEquals(lastOwn[w], tagOf(store.get(own[w]).orElseThrow()));
      }
    }
  }

  @Test
  void statsReportTheEngineAndWhatIsStored() {
    store.put(object(UUID.randomUUID(), "v", "x".repeat(10_000)));

    StoreStats stats = store.stats();

    assertEquals(engine(), stats.engine());
    assertFalse(stats.durability().isBlank());
    assertEquals(1, stats.objects());
    assertTrue(stats.usedBytes() >= 10_000, "used bytes " + stats.usedBytes());
    if (bounded()) {
      assertTrue(stats.capacityBytes() >= poolSize() - (1 << 20), "capacity " + stats.capacityBytes());
      assertEquals(poolDir.toAbsolutePath().toString(), stats.path());
    }
  }

  @Test
  void aClosedStoreRefusesCalls() {
    UUID id = UUID.randomUUID();
    store.put(object(id, "a", "1"));

    store.close();
    store.close();

    assertThrows(InternalException.class, () -> store.get(id));
    assertThrows(InternalException.class, () -> store.put(object(id, "a", "2")));
    assertThrows(InternalException.class, () -> store.count());
  }

  @Test
  void reopeningAfterCloseKeepsEveryObject() {
    assumeTrue(durable(), "the engine keeps nothing across a restart");
    // setup
    Map<UUID, StoredObject> objects = new HashMap<>();
    for (int i = 0; i < 3000; i++) {
      StoredObject o = object(UUID.randomUUID(), "i", Integer.toString(i), "pad", "p".repeat(i % 500));
      objects.put(o.id(), o);
      store.put(o);
    }
    UUID changed = objects.keySet().iterator().next();
    store.applyDelta(new ObjectDelta(changed, Map.of("i", value("changed")), Set.of("pad")));
    objects.put(changed, object(changed, "i", "changed"));
    UUID removed = objects.keySet().stream().filter(id -> !id.equals(changed)).findFirst().orElseThrow();
    store.remove(removed);
    objects.remove(removed);
    store.checkpoint();
    long used = store.stats().usedBytes();
    // run
    store.close();
    store = open(poolSize());
    // verify
    assertEquals(objects.size(), store.count());
    for (StoredObject o : objects.values()) {
      assertSameObject(o, store.get(o.id()).orElseThrow());
      assertEquals(o.header(), store.header(o.id()).orElseThrow());
    }
    assertEquals(used, store.stats().usedBytes());
    UUID more = UUID.randomUUID();
    store.put(object(more, "after", "reopen"));
    assertEquals(objects.size() + 1, store.count());
  }

  @Test
  void recoveryAfterSigkillKeepsEveryAcknowledgedWriteAndTearsNothing() throws Exception {
    assumeTrue(crashConsistent(), "the engine does not promise durability at return");

    CrashScenario scenario = killThreeWritersAndReopen(11, false);

    assertEquals(scenario.expectedObjects(), store.count());
    assertTrue(scenario.expectedObjects() > 0);
  }

  @Test
  void recoveryAfterSigkillKeepsEveryWriteAcknowledgedBeforeTheLastCheckpointAndTearsNothing() throws Exception {
    assumeTrue(durableAtCheckpoint(), "the engine promises more: durability at return");

    CrashScenario scenario = killThreeWritersAndReopen(13, true);

    assertEquals(scenario.expectedObjects(), store.count());
    assertTrue(scenario.expectedObjects() > 0);
    assertTrue(scenario.checkpointsSeen() > 0, "the writer completed no checkpoint");
  }

  /**
   * Closes the store, runs three rounds of a writer killed with SIGKILL ({@link CrashScenario},
   * seeded with {@code seed}, {@code atCheckpoint} as it says), then reopens the store.
   */
  private CrashScenario killThreeWritersAndReopen(long seed, boolean atCheckpoint) throws Exception {
    store.close();
    CrashScenario scenario = new CrashScenario(config(poolDir, poolSize()), () -> open(poolSize()), seed, atCheckpoint);
    for (long round = 1; round <= 3; round++) {
      scenario.runRound(round);
    }
    store = open(poolSize());
    return scenario;
  }

  @Test
  void aFullPoolRefusesWritesWithStoreFullAndStaysUsable() {
    assumeTrue(bounded(), "the engine has no fixed capacity");
    // setup
    store.close();
    TestPools.delete(poolDir);
    store = open(smallPoolSize());
    List<UUID> stored = new ArrayList<>();
    byte[] chunk = new byte[64 * 1024];
    // run: fill until full
    StoreFullException full = assertThrows(StoreFullException.class, () -> {
      for (int i = 0; i < 10_000; i++) {
        UUID id = UUID.randomUUID();
        store.put(object(id, Map.of("chunk", FieldValue.of(chunk.clone()), "i", value(Integer.toString(i)))));
        stored.add(id);
      }
    });
    // verify
    assertTrue(full.getMessage().contains("full"), full.getMessage());
    assertTrue(stored.size() > 10, "stored " + stored.size());
    assertEquals(stored.size(), store.count());
    for (int i = 0; i < stored.size(); i++) {
      assertEquals(Integer.toString(i), text(store.get(stored.get(i)).orElseThrow().fields().get("i")));
    }
    for (UUID id : stored.subList(0, 5)) {
      assertTrue(store.remove(id));
    }
    UUID after = UUID.randomUUID();
    store.put(object(after, Map.of("chunk", FieldValue.of(chunk.clone()))));
    assertEquals(chunk.length, store.get(after).orElseThrow().fields().get("chunk").value().length);
  }

  @Test
  void aBatchThatDoesNotFitStoresNoneOfIt() {
    assumeTrue(bounded(), "the engine has no fixed capacity");
    // setup
    store.close();
    TestPools.delete(poolDir);
    store = open(smallPoolSize());
    UUID existing = UUID.randomUUID();
    store.put(object(existing, "v", "before"));
    List<StoredObject> batch = new ArrayList<>();
    batch.add(object(existing, "v", "after"));
    for (long bytes = 0; bytes <= smallPoolSize(); bytes += 512 * 1024) {
      batch.add(object(UUID.randomUUID(), Map.of("chunk", FieldValue.of(new byte[512 * 1024]))));
    }
    // run
    assertThrows(StoreFullException.class, () -> store.putAll(batch));
    // verify
    assertEquals(1, store.count());
    assertEquals("before", text(store.get(existing).orElseThrow().fields().get("v")));
    store.putAll(batch.subList(0, 3));
    assertEquals(3, store.count());
  }

  @Test
  void aMissingPoolDirectoryIsCreated() {
    assumeTrue(durable(), "the engine keeps nothing in its pool directory");
    store.close();
    Path nested = poolDir.resolve("a").resolve("b");

    try (ObjectStore created = ObjectStores.open(config(nested, poolSize()))) {
      created.put(object(UUID.randomUUID(), "a", "1"));
      assertEquals(1, created.count());
    }

    assertTrue(Files.isDirectory(nested));
  }

  @Test
  void aPoolPathThatIsNotAWritableDirectoryIsRefused() throws Exception {
    assumeTrue(durable(), "the engine keeps nothing in its pool directory");
    Path file = Files.createFile(poolDir.resolve("a-file"));

    InvalidArgumentException isFile = assertThrows(InvalidArgumentException.class,
        () -> ObjectStores.open(config(file, poolSize())));
    InvalidArgumentException underFile = assertThrows(InvalidArgumentException.class,
        () -> ObjectStores.open(config(file.resolve("pool"), poolSize())));

    assertTrue(isFile.getMessage().contains(file.toString()), isFile.getMessage());
    assertTrue(underFile.getMessage().contains(file.toString()), underFile.getMessage());
    assertTrue(Files.isRegularFile(file));
  }

  @Test
  void aPoolMadeByAnotherEngineIsRefusedAndLeftUntouched() throws Exception {
    assumeTrue(durable(), "the engine keeps nothing in its pool directory");
    UUID id = UUID.randomUUID();
    store.put(object(id, "a", "1"));
    store.close();
    Path marker = poolDir.resolve("ENGINE");
    String original = Files.readString(marker);
    String other = engine().equals("heap") ? "kv" : "heap";
    Files.writeString(marker, other + "\n");

    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> open(poolSize()));

    assertTrue(e.getMessage().contains(other), e.getMessage());
    assertEquals(other + "\n", Files.readString(marker));
    Files.writeString(marker, original);
    store = open(poolSize());
    assertEquals("1", text(store.get(id).orElseThrow().fields().get("a")));
  }

  @Test
  void aPoolAlreadyOpenIsNotOpenedTwice() {
    assumeTrue(durable(), "the engine keeps nothing in its pool directory");
    UUID id = UUID.randomUUID();
    store.put(object(id, "a", "1"));

    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> open(poolSize()));

    assertTrue(e.getMessage().contains("already open"), e.getMessage());
    assertEquals("1", text(store.get(id).orElseThrow().fields().get("a")));
  }

  /** Asserts that two objects have the same ID, header, field names in order, values and references. */
  protected static void assertSameObject(StoredObject expected, StoredObject actual) {
    assertEquals(expected.id(), actual.id());
    assertEquals(expected.header(), actual.header());
    assertEquals(List.copyOf(expected.fields().keySet()), List.copyOf(actual.fields().keySet()));
    for (Map.Entry<String, FieldValue> e : expected.fields().entrySet()) {
      FieldValue got = actual.fields().get(e.getKey());
      assertArrayEquals(e.getValue().value(), got.value(), "value of " + e.getKey());
      assertEquals(e.getValue().references(), got.references(), "references of " + e.getKey());
    }
  }
}
