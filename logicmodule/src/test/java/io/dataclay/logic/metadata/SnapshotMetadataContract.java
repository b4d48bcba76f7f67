package io.dataclay.logic.metadata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.Language;
import io.dataclay.exceptions.AliasAlreadyExistsException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.NamespaceConflictException;
import io.dataclay.exceptions.ObjectAlreadyExistsException;
import io.dataclay.exceptions.PermissionDeniedException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What snapshots and imports need of every metadata database: a cut that later writes do not
 * change, and an import commit that registers everything staged or nothing. Each database runs
 * these through a subclass that supplies fresh, empty databases.
 */
@Timeout(60)
abstract class SnapshotMetadataContract {
  private static final String IMPORT = "00112233445566778899aabbccddeeff";
  private final String b1 = UUID.randomUUID().toString();
  private final String b2 = UUID.randomUUID().toString();
  private MetadataStore store;

  /** The JDBC URL of a new, empty database. */
  protected abstract String freshDatabaseUrl() throws Exception;

  @BeforeEach
  void open() throws Exception {
    store = MetadataStore.open(freshDatabaseUrl(), MetadataSync.NORMAL);
    store.accounts().create(new AccountRecord("admin", "h", "s", 1, true));
  }

  @AfterEach
  void close() {
    store.close();
  }

  private ObjectRecord object(String dataset) {
    return new ObjectRecord(UUID.randomUUID().toString(), "app.Person", Language.PYTHON, dataset, b1, List.of(),
        List.of(), "");
  }

  private static ModelRecord model(String namespace) {
    return new ModelRecord(namespace, Language.PYTHON, "admin", 0,
        List.of(new ModelRecord.File(namespace + "/m.py", "class C: pass\n".getBytes(StandardCharsets.UTF_8))),
        List.of(new ModelRecord.ClassInfo(namespace + ".m.C", List.of(), List.of())));
  }

  private List<String> staged(int masters) {
    List<ImportTables.StagedCopy> copies = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < masters; i++) {
      String id = UUID.randomUUID().toString();
      ids.add(id);
      copies.add(new ImportTables.StagedCopy(id, null, "app.Person", Language.PYTHON, "carol", null,
          i == 0 ? List.of(b2) : List.of()));
    }
    store.imports().stageCopies(IMPORT, b1, copies);
    store.imports().stageCopies(IMPORT, b2, List.of(new ImportTables.StagedCopy(ids.get(0), b1, "app.Person",
        Language.PYTHON, "carol", null, List.of())));
    return ids;
  }

  private ImportTables.Content content(Map<String, ImportTables.Expected> expected, ImportTables.MayTouch touch) {
    return new ImportTables.Content(List.of(new AccountRecord("carol", "h", "s", 1, false)),
        List.of(new MetadataCut.Dataset("carol", "carol")),
        List.of(new ContractRecord("carol", "carol", "admin", true, 0, 0)), List.of(model("carolns")), expected, touch);
  }

  private static final ImportTables.MayTouch ANYTHING = new ImportTables.MayTouch(true, true, true);

  private static Map<String, ImportTables.Expected> planned(String b1, long masters, String b2) {
    return Map.of(b1, new ImportTables.Expected(masters, 0), b2, new ImportTables.Expected(0, 1));
  }

  @Test
  void aCommitRegistersTheStagedObjectsReplicasAliasesAccountsContractsAndModelsTogether() {
    // setup
    List<String> ids = staged(3);
    store.imports().stageAliases(IMPORT, List.of(new MetadataCut.Alias("carol", "first", ids.get(0))));
    // run
    ImportTables.Committed done = store.imports().commit(IMPORT, content(planned(b1, 3, b2),
        ImportTables.MayTouch.NOTHING), 1000);
    // verify
    assertEquals(3, done.objects());
    assertEquals(1, done.replicas());
    assertEquals(1, done.aliases());
    assertEquals(List.of("carol"), done.accountsCreated());
    ObjectRecord first = store.objects().findByAlias("carol", "first").orElseThrow();
    assertEquals(ids.get(0), first.id());
    assertEquals(b1, first.masterBackendId());
    assertEquals(List.of(b2), first.replicaBackendIds());
    assertEquals("carol", store.accounts().datasetOwner("carol").orElseThrow());
    assertEquals(1, store.accounts().contractsTo("admin").size());
    assertTrue(store.models().find("carolns").isPresent());
    assertTrue(store.imports().committed(IMPORT));
  }

  @Test
  void aCommitThatFindsAnyConflictRegistersNothing() {
    List<Consumer<List<String>>> conflicts = List.of(
        ids -> Registrations.register(store, List.of(new ObjectRecord(ids.get(1), "app.Person", Language.PYTHON,
            "admin", b1, List.of(), List.of(), "")), null, null),
        ids -> {
          ObjectRecord other = object("carol");
          Registrations.register(store, List.of(other), "first", other.id());
        },
        ids -> store.imports().stageCopies(IMPORT, b2, List.of(new ImportTables.StagedCopy(ids.get(2), b2, "app.Person",
            Language.PYTHON, "carol", null, List.of()))),
        ids -> store.accounts().grant(new ContractRecord("carol", "admin", "admin", false, 0, 0)),
        ids -> store.imports().stageCopies(IMPORT, b1, List.of(new ImportTables.StagedCopy(ids.get(1), null,
            "app.Person", Language.PYTHON, "carol", null, List.of(b2)))));
    List<Class<? extends DataClayException>> expected = List.of(ObjectAlreadyExistsException.class,
        AliasAlreadyExistsException.class, InvalidArgumentException.class, InvalidArgumentException.class,
        InvalidArgumentException.class);
    for (int i = 0; i < conflicts.size(); i++) {
      // setup: a clean database each time, with a conflict of one kind
      reopen();
      List<String> ids = staged(3);
      store.imports().stageAliases(IMPORT, List.of(new MetadataCut.Alias("carol", "first", ids.get(0))));
      conflicts.get(i).accept(ids);
      long objectsBefore = store.objects().countObjects();
      // run
      assertThrows(expected.get(i), () -> store.imports().commit(IMPORT, content(planned(b1, 3, b2), ANYTHING), 1000),
          "conflict " + i);
      // verify: nothing of the import is there
      assertEquals(objectsBefore, store.objects().countObjects(), "conflict " + i);
      assertFalse(store.models().find("carolns").isPresent(), "conflict " + i);
      assertFalse(store.imports().committed(IMPORT), "conflict " + i);
      assertFalse(store.accounts().find("carol").isPresent(), "conflict " + i);
    }
  }

  @Test
  void aCommitTouchesWhatTheClusterHadOnlyWhereItMay() {
    // each: something the cluster has by the commit, and what the import may touch
    List<Runnable> existing = List.of(
        () -> store.accounts().create(new AccountRecord("carol", "h2", "s2", 1, false)),
        () -> store.accounts().grant(new ContractRecord("carol", "admin", "admin", false, 0, 0)),
        () -> store.models().register(model("carolns")));
    List<ImportTables.MayTouch> refused = List.of(new ImportTables.MayTouch(false, true, true),
        new ImportTables.MayTouch(true, false, true), ANYTHING);
    List<Class<? extends DataClayException>> expected = List.of(PermissionDeniedException.class,
        PermissionDeniedException.class, NamespaceConflictException.class);
    for (int i = 0; i < existing.size(); i++) {
      reopen();
      List<String> ids = staged(3);
      existing.get(i).run();
      long objectsBefore = store.objects().countObjects();
      // run
      ImportTables.MayTouch touch = refused.get(i);
      DataClayException e = assertThrows(expected.get(i), () -> store.imports().commit(IMPORT,
          content(planned(b1, 3, b2), touch), 1000), "case " + i);
      // verify: refused, nothing registered
      assertEquals(objectsBefore, store.objects().countObjects(), "case " + i);
      assertFalse(store.imports().committed(IMPORT), "case " + i);
      assertFalse(store.objects().find(ids.get(0)).isPresent(), "case " + i);
      assertTrue(e.getMessage().contains("carol"), e.getMessage());
    }
    // an object staged into a dataset the cluster has, by an import that does not list it
    reopen();
    store.accounts().create(new AccountRecord("alice", "h", "s", 1, false));
    String planted = UUID.randomUUID().toString();
    store.imports().stageCopies(IMPORT, b1, List.of(new ImportTables.StagedCopy(planted, null, "app.Person",
        Language.PYTHON, "alice", null, List.of())));
    ImportTables.Content bare = new ImportTables.Content(List.of(), List.of(), List.of(), List.of(),
        Map.of(b1, new ImportTables.Expected(1, 0)), new ImportTables.MayTouch(true, true, false));
    DataClayException e = assertThrows(PermissionDeniedException.class, () -> store.imports().commit(IMPORT, bare,
        1000));
    assertTrue(e.getMessage().contains("objects-in-existing-datasets"), e.getMessage());
    assertFalse(store.objects().find(planted).isPresent());
    // allowed, it goes in
    assertEquals(1, store.imports().commit(IMPORT, new ImportTables.Content(List.of(), List.of(), List.of(), List.of(),
        Map.of(b1, new ImportTables.Expected(1, 0)), ANYTHING), 1000).objects());
  }

  private void reopen() {
    close();
    try {
      open();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aCutDoesNotSeeWhatIsWrittenAfterItOpened() {
    // setup
    ObjectRecord before = object("admin");
    Registrations.register(store, List.of(before), "before", before.id());
    // run
    List<String> seen = new ArrayList<>();
    List<String> aliases = new ArrayList<>();
    try (MetadataCut cut = store.openCut()) {
      ObjectRecord after = object("admin");
      Registrations.register(store, List.of(after), "after", after.id());
      store.objects().addReplicas(List.of(before.id()), b2, b1);
      Iterator<MetadataCut.ObjectCopies> objects = cut.objects(null);
      objects.forEachRemaining(o -> seen.add(o.id() + " " + o.replicas()));
      cut.aliases(null).forEachRemaining(a -> aliases.add(a.alias()));
    }
    // verify
    assertEquals(List.of(before.id() + " []"), seen);
    assertEquals(List.of("before"), aliases);
    assertEquals(2, store.objects().countObjects());
  }

  @Test
  void checkingAModelChangesNothingAndACutSeesTheModels() {
    store.imports().checkModel(model("probe"));
    assertFalse(store.models().find("probe").isPresent());
    store.models().register(model("kept"));
    try (MetadataCut cut = store.openCut()) {
      assertEquals(List.of("kept"), cut.models().stream().map(ModelRecord::namespace).toList());
      assertEquals(List.of("admin"), cut.accounts(null, false).stream().map(AccountRecord::username).toList());
      assertEquals("", cut.accounts(null, false).get(0).passwordHash());
      assertEquals("h", cut.accounts(null, true).get(0).passwordHash());
    }
  }
}
