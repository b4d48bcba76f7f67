package io.dataclay.ds.objects;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.Language;
import io.dataclay.ds.registration.ObjectLocation;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.ds.store.memory.MemoryStore;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class ReferenceAccessTest {
  private static final Session ALICE = new Session("t", "alice", "alice", Set.of("alice"), Long.MAX_VALUE, false);
  private static final Session BACKEND = new Session("b", "_dataclay_backends", "x", Set.of(), Set.of(), Long.MAX_VALUE,
      false, true, 0, "");

  @TempDir
  Path dir;
  private ObjectStore store;
  private final Map<UUID, String> elsewhere = new HashMap<>();
  private final AtomicInteger lookups = new AtomicInteger();
  private final IdClaims claims = new IdClaims();
  private ReferenceAccess access;

  @BeforeEach
  void open() {
    store = MemoryStore.open(new StoreConfig("memory", dir, 64L << 20));
    access = new ReferenceAccess(store, this::locate, claims);
  }

  @AfterEach
  void close() {
    store.close();
  }

  private UUID storedIn(String dataset) {
    UUID id = UUID.randomUUID();
    store.put(new StoredObject(id, new ObjectHeader("app.Node", Language.PYTHON, dataset, null, null), Map.of()));
    return id;
  }

  private static Map<String, FieldValue> referencing(UUID... ids) {
    return Map.of("next", new FieldValue(new byte[] {1}, List.of(ids)));
  }

  @Test
  void a_reference_to_a_readable_or_new_object_passes_and_others_are_refused_as_not_existing() {
    // setup: alice's object here, bob's here, bob's on another backend, one nobody has, one being made
    UUID mine = storedIn("alice");
    UUID bobsHere = storedIn("bob");
    UUID bobsThere = UUID.randomUUID();
    elsewhere.put(bobsThere, "bob");
    UUID nobodys = UUID.randomUUID();
    UUID created = UUID.randomUUID();
    // run / verify
    assertDoesNotThrow(() -> access.check(ALICE, referencing(mine, created), Set.of(created), "objects[0]"));
    ObjectDoesNotExistException here = assertThrows(ObjectDoesNotExistException.class,
        () -> access.check(ALICE, referencing(bobsHere), Set.of(), "objects[0]"));
    ObjectDoesNotExistException there = assertThrows(ObjectDoesNotExistException.class,
        () -> access.check(ALICE, referencing(bobsThere), Set.of(), "objects[0]"));
    ObjectDoesNotExistException unknown = assertThrows(ObjectDoesNotExistException.class,
        () -> access.check(ALICE, referencing(nobodys), Set.of(), "objects[0]"));
    assertEquals(here.getMessage().replace(bobsHere.toString(), "<id>"),
        unknown.getMessage().replace(nobodys.toString(), "<id>"));
    assertEquals(there.getMessage().replace(bobsThere.toString(), "<id>"),
        unknown.getMessage().replace(nobodys.toString(), "<id>"));
    assertTrue(unknown.getMessage().startsWith("objects[0] field 'next' references object " + nobodys));
    assertDoesNotThrow(() -> access.check(BACKEND, referencing(bobsHere, nobodys), Set.of(), "objects[0]"));
  }

  @Test
  void the_dataset_of_an_object_elsewhere_is_asked_once_and_an_unknown_one_every_time() {
    // setup
    UUID there = UUID.randomUUID();
    elsewhere.put(there, "alice");
    UUID nobodys = UUID.randomUUID();
    // run
    boolean knownBefore = access.decidedNow(List.of(there), Set.of());
    for (int i = 0; i < 3; i++) {
      access.check(ALICE, referencing(there), Set.of(), "objects[0]");
      assertThrows(ObjectDoesNotExistException.class,
          () -> access.check(ALICE, referencing(nobodys), Set.of(), "objects[0]"));
    }
    // verify: one lookup for the known object, three for the unknown one (it may be registered later)
    assertFalse(knownBefore);
    assertTrue(access.decidedNow(List.of(there, storedIn("bob")), Set.of()));
    assertEquals(4, lookups.get());
  }

  @Test
  void an_object_stored_here_under_a_claim_is_judged_by_the_logic_module_not_by_its_header() {
    // setup: alice's acknowledged object, registered; bob sent its ID here too, and his copy is
    // stored while his call waits for the Logic Module's refusal
    UUID id = storedIn("bob");
    elsewhere.put(id, "alice");
    claims.claim(List.of(id));
    // run: alice references it meanwhile; then bob's copy is refused and removed
    assertDoesNotThrow(() -> access.check(ALICE, referencing(id), Set.of(), "objects[0]"));
    boolean decidedWhileClaimed = access.decidedNow(List.of(id), Set.of());
    store.remove(id);
    claims.release(List.of(id));
    // verify: alice's reference passed on the Logic Module's word, which is remembered
    assertTrue(decidedWhileClaimed);
    assertDoesNotThrow(() -> access.check(ALICE, referencing(id), Set.of(), "objects[0]"));
    assertEquals(1, lookups.get());
  }

  /** The Logic Module's record of the objects of {@link #elsewhere}. */
  private ObjectLocation locate(UUID id) {
    lookups.incrementAndGet();
    String dataset = elsewhere.get(id);
    if (dataset == null) {
      throw new ObjectDoesNotExistException("object " + id + " does not exist");
    }
    return new ObjectLocation(id, UUID.randomUUID().toString(), List.of(), null,
        new ObjectHeader("app.Node", Language.PYTHON, dataset, null, null));
  }
}
