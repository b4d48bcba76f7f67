package io.dataclay.logic.metadata;

import io.dataclay.client.LogicModuleClient;
import io.dataclay.common.Language;
import io.dataclay.exceptions.AliasAlreadyExistsException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.NamespaceConflictException;
import io.dataclay.exceptions.ObjectAlreadyExistsException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.LogicModuleServer;
import io.dataclay.proto.ObjectInfo;
import io.dataclay.server.GrpcServer;
import io.dataclay.testing.LogicModuleFixture;
import io.grpc.ManagedChannel;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;


/**
 * What every metadata database must do: each database the Logic Module supports runs these
 * tests through a subclass that supplies fresh, empty databases.
 */
@Timeout(60)
abstract class MetadataStoreConformance {
  private final List<MetadataStore> opened = new ArrayList<>();
  private String url;
  private MetadataStore store;
  private final String backend = UUID.randomUUID().toString();

  /** The JDBC URL of a new, empty database. */
  protected abstract String freshDatabaseUrl() throws Exception;

  @BeforeEach
  void openFreshStore() throws Exception {
    url = freshDatabaseUrl();
    store = open();
    store.accounts().create(account("alice"));
    store.backends().upsert(new BackendRecord(backend, "b1", "127.0.0.1", 7001, List.of(Language.PYTHON), "kv"));
  }

  @AfterEach
  void closeStores() {
    opened.forEach(MetadataStore::close);
  }

  private MetadataStore open() {
    MetadataStore s = MetadataStore.open(url, MetadataSync.NORMAL);
    opened.add(s);
    return s;
  }

  private MetadataStore reopen() {
    store.close();
    store = open();
    return store;
  }

  private static AccountRecord account(String name) {
    return new AccountRecord(name, "hash-" + name, "salt", 1, false);
  }

  private ObjectRecord object(String dataset) {
    return new ObjectRecord(UUID.randomUUID().toString(), "app.Person", Language.PYTHON, dataset, backend,
        List.of(), List.of(), "");
  }

  private static ModelRecord model(String ns, String owner, Language lang, String... paths) {
    List<ModelRecord.File> files = new ArrayList<>();
    for (String p : paths) {
      files.add(new ModelRecord.File(p, ("code of " + p).getBytes(StandardCharsets.UTF_8)));
    }
    String cls = ns + ".Person";
    return new ModelRecord(ns, lang, owner, 0, files, List.of(new ModelRecord.ClassInfo(cls,
        List.of(new ModelRecord.Member("name", "str"), new ModelRecord.Member("age", "int")),
        List.of(new ModelRecord.Member("birthday", "(self) -> int")))));
  }

  @Test
  void opening_an_existing_database_again_keeps_its_schema_and_rows() {
    // run
    MetadataStore again = reopen();
    // verify
    assertTrue(again.accounts().find("alice").isPresent());
    assertEquals(List.of("alice"), again.accounts().ownedDatasets("alice"));
  }

  @Test
  void an_account_owns_a_dataset_named_after_it_and_cannot_be_created_twice() {
    // run
    boolean second = store.accounts().create(account("alice"));
    // verify
    assertFalse(second);
    assertEquals(Optional.of("alice"), store.accounts().datasetOwner("alice"));
    assertEquals("hash-alice", store.accounts().find("alice").orElseThrow().passwordHash());
  }

  @Test
  void an_account_named_like_another_owners_dataset_is_refused_and_leaves_nothing() {
    // setup
    store.accounts().grant(rw("bob", "alice", "alice"));
    // run
    assertThrows(InvalidArgumentException.class, () -> store.accounts().create(account("bob")));
    // verify
    assertTrue(store.accounts().find("bob").isEmpty());
  }

  @Test
  void granting_creates_a_missing_dataset_for_the_granter_and_only_its_owner_may_grant_it() {
    // setup
    store.accounts().create(account("bob"));
    // run
    store.accounts().grant(rw("shared", "alice", "bob"));
    store.accounts().grant(rw("shared", "alice", "bob"));
    // verify
    assertEquals(Optional.of("alice"), store.accounts().datasetOwner("shared"));
    assertEquals(List.of("bob"), store.accounts().ownedDatasets("bob"));
    assertEquals(List.of(rw("shared", "alice", "bob")), store.accounts().contractsTo("bob"));
    assertEquals(List.of("alice", "shared"), store.accounts().ownedDatasets("alice"));
    assertThrows(PermissionDeniedException.class, () -> store.accounts().grant(rw("shared", "bob", "bob")));
  }

  @Test
  void granting_again_replaces_the_terms_and_revoking_removes_the_contract_for_its_owner_only() {
    // setup
    store.accounts().create(account("bob"));
    store.accounts().grant(rw("shared", "alice", "bob"));
    ContractRecord narrower = new ContractRecord("shared", "alice", "bob", true, 1_000, 9_000);
    // run
    store.accounts().grant(narrower);
    // verify
    assertEquals(List.of(narrower), store.accounts().contractsTo("bob"));
    assertEquals(List.of(narrower), store.accounts().contractsOn("alice"));
    assertThrows(PermissionDeniedException.class, () -> store.accounts().revoke("shared", "bob", "bob"));
    assertTrue(store.accounts().revoke("shared", "alice", "bob"));
    assertFalse(store.accounts().revoke("shared", "alice", "bob"));
    assertEquals(List.of(), store.accounts().contractsTo("bob"));
  }

  @Test
  void model_registration_is_a_right_an_account_is_given_and_loses() {
    // run
    boolean given = store.accounts().setModelRegistration("alice", true);
    boolean unknown = store.accounts().setModelRegistration("nobody", true);
    // verify
    assertTrue(given);
    assertFalse(unknown);
    assertTrue(store.accounts().find("alice").orElseThrow().mayRegisterModels());
    store.accounts().setModelRegistration("alice", false);
    assertFalse(store.accounts().find("alice").orElseThrow().mayRegisterModels());
  }

  private static ContractRecord rw(String dataset, String owner, String beneficiary) {
    return new ContractRecord(dataset, owner, beneficiary, false, 0, 0);
  }

  @Test
  void sessions_are_found_by_token_hash_closed_counted_and_purged() {
    // setup
    store.sessions().insert(new SessionRecord("h1", "alice", "alice", 1_000, false, false, null));
    store.sessions().insert(new SessionRecord("h2", "alice", "alice", 5_000, false, false, "backend-7"));
    // run
    boolean closed = store.sessions().close("h2");
    // verify
    assertTrue(closed);
    assertFalse(store.sessions().close("nope"));
    assertTrue(store.sessions().find("h2").orElseThrow().closed());
    assertEquals(1, store.sessions().countOpen(500));
    assertEquals(0, store.sessions().countOpen(1_000));
    assertEquals(2, store.sessions().purgeEnded(1_000));
    assertTrue(store.sessions().find("h1").isEmpty());
  }

  @Test
  void open_sessions_are_counted_per_account_without_backends_closed_or_expired_ones() {
    // setup
    store.accounts().create(account("bob"));
    store.sessions().insert(new SessionRecord("a1", "alice", "alice", 1_000, false, false, null));
    store.sessions().insert(new SessionRecord("a2", "alice", "alice", 5_000, false, false, null));
    store.sessions().insert(new SessionRecord("b1", "bob", "bob", 5_000, false, false, null));
    store.sessions().insert(new SessionRecord("b2", "bob", "bob", 5_000, false, false, null));
    store.sessions().insert(new SessionRecord("k1", "alice", "alice", 5_000, false, false, "backend-7"));
    // run
    store.sessions().close("b2");
    // verify
    assertEquals(Map.of("alice", 2L, "bob", 1L), store.sessions().countOpenByAccount(500));
    assertEquals(Map.of("alice", 1L, "bob", 1L), store.sessions().countOpenByAccount(1_000));
    assertEquals(Map.of(), store.sessions().countOpenByAccount(5_000));
  }

  @Test
  void a_model_round_trips_with_its_files_classes_and_an_increasing_version() {
    // run
    ModelRecord first = store.models().register(model("shop", "alice", Language.PYTHON, "shop/a.py", "shop/b.py"));
    ModelRecord second = store.models().register(model("shop", "alice", Language.PYTHON, "shop/a.py"));
    // verify
    assertEquals(1, first.version());
    assertEquals(2, second.version());
    ModelRecord found = store.models().find("shop").orElseThrow();
    assertEquals(2, found.version());
    assertEquals("alice", found.owner());
    assertEquals(1, found.files().size());
    assertArrayEquals("code of shop/a.py".getBytes(StandardCharsets.UTF_8), found.files().get(0).content());
    assertEquals(model("shop", "alice", Language.PYTHON).classes(), found.classes());
  }

  @Test
  void a_namespace_belongs_to_its_first_registrant() {
    // setup
    store.accounts().create(account("bob"));
    store.models().register(model("shop", "alice", Language.PYTHON, "shop/a.py"));
    // run
    assertThrows(PermissionDeniedException.class,
        () -> store.models().register(model("shop", "bob", Language.PYTHON, "shop/a.py")));
    // verify
    assertEquals(1, store.models().find("shop").orElseThrow().version());
  }

  @Test
  void a_file_or_class_of_another_namespace_is_a_conflict_that_changes_nothing() {
    // setup
    store.models().register(model("shop", "alice", Language.PYTHON, "shop/a.py"));
    ModelRecord sameClass = new ModelRecord("other", Language.PYTHON, "alice", 0,
        List.of(new ModelRecord.File("other/x.py", new byte[] {1})),
        List.of(new ModelRecord.ClassInfo("shop.Person", List.of(), List.of())));
    // run
    assertThrows(NamespaceConflictException.class,
        () -> store.models().register(model("other", "alice", Language.PYTHON, "other/x.py", "shop/a.py")));
    assertThrows(NamespaceConflictException.class, () -> store.models().register(sameClass));
    assertThrows(NamespaceConflictException.class,
        () -> store.models().register(model("shop", "alice", Language.JAVA, "shop/A.class")));
    // verify
    assertTrue(store.models().find("other").isEmpty());
    assertEquals(1, store.models().find("shop").orElseThrow().version());
  }

  @Test
  void re_registering_a_model_releases_the_paths_it_no_longer_has() {
    // setup
    store.models().register(model("shop", "alice", Language.PYTHON, "shop/a.py", "shared/util.py"));
    store.models().register(model("shop", "alice", Language.PYTHON, "shop/a.py"));
    // run
    ModelRecord other = store.models().register(model("tools", "alice", Language.PYTHON, "shared/util.py"));
    // verify
    assertEquals(1, other.version());
    assertEquals(List.of("shop", "tools"), store.models().list(null).stream().map(ModelRecord::namespace).toList());
    assertEquals(List.of(), store.models().list(Language.JAVA));
  }

  @Test
  void a_model_starts_published_or_not_as_its_first_registration_says_until_that_is_changed() {
    // setup
    store.accounts().create(account("bob"));
    // run
    ModelRecord shop = store.models().register(model("shop", "alice", Language.PYTHON, "shop/a.py").withPublished(true));
    ModelRecord again = store.models().register(model("shop", "alice", Language.PYTHON, "shop/a.py"));
    ModelRecord tools = store.models().register(model("tools", "bob", Language.PYTHON, "tools/a.py"));
    ModelRecord unpublished = store.models().setPublished("shop", false).orElseThrow();
    ModelRecord published = store.models().setPublished("tools", true).orElseThrow();
    // verify: a new version keeps the decision; only a change of it changes it
    assertTrue(shop.published());
    assertTrue(again.published());
    assertFalse(tools.published());
    assertFalse(unpublished.published());
    assertTrue(published.published());
    assertFalse(store.models().find("shop").orElseThrow().published());
    assertTrue(store.models().find("tools").orElseThrow().published());
    assertTrue(store.models().setPublished("nothing", true).isEmpty());
  }

  @Test
  void every_model_change_takes_the_next_revision_which_the_catalog_reports() {
    // run
    long before = store.models().revision();
    ModelRecord first = store.models().register(model("shop", "alice", Language.PYTHON, "shop/a.py"));
    ModelRecord second = store.models().register(model("shop", "alice", Language.PYTHON, "shop/a.py"));
    ModelRecord published = store.models().setPublished("shop", true).orElseThrow();
    store.models().register(model("tools", "alice", Language.PYTHON, "tools/a.py"));
    ModelStore.Removal removed = store.models().remove("tools", false).orElseThrow();
    ModelStore.Catalog catalog = reopen().models().catalog();
    // verify: strictly increasing, also across a removal, and kept by the database
    assertEquals(before + 1, first.revision());
    assertEquals(before + 2, second.revision());
    assertEquals(before + 3, published.revision());
    assertEquals(before + 5, removed.revision());
    assertEquals(before + 5, catalog.revision());
    assertEquals(List.of("shop"), catalog.models().stream().map(ModelRecord::namespace).toList());
    assertEquals(before + 3, catalog.models().get(0).revision());
  }

  @Test
  void removing_a_model_is_refused_while_objects_of_its_classes_exist_unless_forced_and_frees_its_namespace() {
    // setup: one object of the model's class, one of another class
    store.models().register(model("shop", "alice", Language.PYTHON, "shop/a.py"));
    Registrations.register(store, List.of(new ObjectRecord(UUID.randomUUID().toString(), "shop.Person",
        Language.PYTHON, "alice", backend, List.of(), List.of(), ""), object("alice")), null, null);
    // run
    ModelStore.Removal refused = store.models().remove("shop", false).orElseThrow();
    boolean keptAfterRefusal = store.models().find("shop").isPresent();
    ModelStore.Removal forced = store.models().remove("shop", true).orElseThrow();
    // verify: nothing changed by the refusal; the forced removal leaves the object and frees the names
    assertFalse(refused.removed());
    assertEquals(1, refused.objects());
    assertTrue(keptAfterRefusal);
    assertTrue(forced.removed());
    assertEquals(1, forced.objects());
    assertTrue(store.models().find("shop").isEmpty());
    assertTrue(store.models().remove("shop", true).isEmpty());
    assertEquals(2, store.objects().countObjects());
    store.accounts().create(account("bob"));
    ModelRecord reused = store.models().register(model("shop", "bob", Language.JAVA, "shop/a.py"));
    assertEquals("bob", reused.owner());
    assertEquals(1, reused.version());
  }

  @Test
  void taking_the_registration_right_withdraws_the_accounts_models_and_giving_it_back_restores_them() {
    // setup: alice may register; an administrator's model is never withdrawn
    store.accounts().setModelRegistration("alice", true);
    store.accounts().create(new AccountRecord("root", "hash-root", "salt", 1, true));
    ModelRecord shop = store.models().register(model("shop", "alice", Language.PYTHON, "shop/a.py"));
    store.models().register(model("admin", "root", Language.PYTHON, "admin/a.py"));
    // run
    store.accounts().setModelRegistration("alice", false);
    ModelRecord withdrawn = store.models().find("shop").orElseThrow();
    List<ModelRecord> owned = store.models().ownedBy("alice");
    store.accounts().setModelRegistration("alice", true);
    ModelRecord restored = store.models().find("shop").orElseThrow();
    // verify: each change gave the account's models a new revision
    assertFalse(shop.withdrawn());
    assertTrue(withdrawn.withdrawn());
    assertTrue(withdrawn.revision() > shop.revision());
    assertEquals(List.of("shop"), owned.stream().map(ModelRecord::namespace).toList());
    assertFalse(restored.withdrawn());
    assertTrue(restored.revision() > withdrawn.revision());
    assertFalse(store.models().find("admin").orElseThrow().withdrawn());
  }

  @Test
  void re_registering_a_backend_updates_its_address() {
    // run
    store.backends().upsert(new BackendRecord(backend, "b1", "10.0.0.9", 7999,
        List.of(Language.PYTHON, Language.JAVA), "heap"));
    // verify
    List<BackendRecord> all = store.backends().all();
    assertEquals(1, all.size());
    assertEquals("10.0.0.9", all.get(0).host());
    assertEquals(7999, all.get(0).port());
    assertEquals(List.of(Language.PYTHON, Language.JAVA), all.get(0).languages());
    assertEquals("heap", all.get(0).storeEngine());
  }

  @Test
  void objects_register_with_replicas_and_alias_and_are_found_by_id_and_alias() {
    // setup
    String replica = UUID.randomUUID().toString();
    store.backends().upsert(new BackendRecord(replica, "b2", "127.0.0.1", 7002, List.of(Language.JAVA), "kv"));
    ObjectRecord root = object("alice");
    ObjectRecord child = new ObjectRecord(UUID.randomUUID().toString(), "app.Address", Language.PYTHON, "alice",
        backend, List.of(replica), List.of(), root.id());
    // run
    Registrations.register(store, List.of(root, child), "home", root.id());
    // verify
    ObjectRecord found = store.objects().find(root.id()).orElseThrow();
    assertEquals(List.of("home"), found.aliases());
    assertEquals(backend, found.masterBackendId());
    assertEquals("", found.versionOf());
    ObjectRecord foundChild = store.objects().find(child.id()).orElseThrow();
    assertEquals(List.of(replica), foundChild.replicaBackendIds());
    assertEquals(root.id(), foundChild.versionOf());
    assertEquals(root.id(), store.objects().findByAlias("alice", "home").orElseThrow().id());
    assertTrue(store.objects().findByAlias("bob", "home").isEmpty());
    assertEquals(2, store.objects().countObjects());
    assertEquals(1, store.objects().countAliases());
  }

  @Test
  void replicas_are_added_and_dropped_and_a_move_makes_a_replica_holder_the_master() {
    // setup
    String second = UUID.randomUUID().toString();
    String third = UUID.randomUUID().toString();
    store.backends().upsert(new BackendRecord(second, "b2", "127.0.0.1", 7002, List.of(Language.PYTHON), "kv"));
    store.backends().upsert(new BackendRecord(third, "b3", "127.0.0.1", 7003, List.of(Language.PYTHON), "kv"));
    ObjectRecord o = object("alice");
    ObjectRecord plain = object("alice");
    Registrations.register(store, List.of(o, plain), null, null);
    String unknown = UUID.randomUUID().toString();
    // run
    store.objects().addReplicas(List.of(o.id(), unknown), second, backend);
    store.objects().addReplicas(List.of(o.id()), third, backend);
    store.objects().addReplicas(List.of(o.id()), backend, backend);
    List<ObjectRecord> replicated = store.objects().replicatedFrom(backend);
    store.objects().setMaster(List.of(o.id()), second, backend);
    ObjectRecord moved = store.objects().find(o.id()).orElseThrow();
    store.objects().removeReplicas(List.of(o.id()), third, second);
    // verify: unknown objects and the master's own backend are never listed as replicas
    assertEquals(List.of(o.id()), replicated.stream().map(ObjectRecord::id).toList());
    assertEquals(List.of(second, third).stream().sorted().toList(), replicated.get(0).replicaBackendIds());
    assertEquals(second, moved.masterBackendId());
    assertEquals(List.of(third), moved.replicaBackendIds());
    assertEquals(List.of(), store.objects().find(o.id()).orElseThrow().replicaBackendIds());
    assertTrue(store.objects().find(unknown).isEmpty());
    assertTrue(store.objects().replicatedFrom(backend).isEmpty());
  }

  @Test
  void registering_the_same_objects_again_from_the_same_master_changes_nothing() {
    // setup
    ObjectRecord o = object("alice");
    Registrations.register(store, List.of(o), "a", o.id());
    // run
    Registrations.register(store, List.of(o), "a", o.id());
    // verify
    assertEquals(1, store.objects().countObjects());
    assertEquals(1, store.objects().countAliases());
  }

  @Test
  void an_object_id_registered_with_another_master_is_refused_with_its_whole_group() {
    // setup
    ObjectRecord o = object("alice");
    Registrations.register(store, List.of(o), null, null);
    String other = UUID.randomUUID().toString();
    store.backends().upsert(new BackendRecord(other, "b2", "127.0.0.1", 7002, List.of(Language.PYTHON), "kv"));
    ObjectRecord moved = new ObjectRecord(o.id(), o.className(), o.language(), o.dataset(), other, List.of(),
        List.of(), "");
    ObjectRecord fresh = object("alice");
    // run
    assertThrows(ObjectAlreadyExistsException.class,
        () -> Registrations.register(store, List.of(fresh, moved), null, null));
    // verify
    assertTrue(store.objects().find(fresh.id()).isEmpty());
    assertEquals(backend, store.objects().find(o.id()).orElseThrow().masterBackendId());
  }

  @Test
  void a_taken_alias_refuses_its_whole_group() {
    // setup
    ObjectRecord first = object("alice");
    Registrations.register(store, List.of(first), "taken", first.id());
    ObjectRecord a = object("alice");
    ObjectRecord b = object("alice");
    // run
    assertThrows(AliasAlreadyExistsException.class,
        () -> Registrations.register(store, List.of(a, b), "taken", b.id()));
    // verify
    assertTrue(store.objects().find(a.id()).isEmpty());
    assertTrue(store.objects().find(b.id()).isEmpty());
    assertEquals(first.id(), store.objects().findByAlias("alice", "taken").orElseThrow().id());
  }

  @Test
  void groups_of_one_request_are_registered_or_refused_each_on_its_own() {
    // setup: registered objects, a taken alias, and another backend
    ObjectRecord existing = object("alice");
    Registrations.register(store, List.of(existing), "taken", existing.id());
    ObjectRecord again = object("alice");
    ObjectRecord another = object("alice");
    Registrations.register(store, List.of(again, another), null, null);
    String other = UUID.randomUUID().toString();
    store.backends().upsert(new BackendRecord(other, "b2", "127.0.0.1", 7002, List.of(Language.PYTHON), "kv"));
    store.accounts().create(account("bob"));
    ObjectRecord fresh1 = object("alice");
    ObjectRecord fresh2 = object("alice");
    ObjectRecord beside = object("alice");
    ObjectRecord namedTaken = object("alice");
    ObjectRecord named = object("alice");
    ObjectRecord otherDataset = object("alice");
    List<ObjectGroup> groups = List.of(
        new ObjectGroup(List.of(fresh1, fresh2), null, null),
        new ObjectGroup(List.of(beside, withMaster(existing, other)), null, null),
        new ObjectGroup(List.of(namedTaken), "taken", namedTaken.id()),
        new ObjectGroup(List.of(named), "new", named.id()),
        new ObjectGroup(List.of(again), null, null),
        new ObjectGroup(List.of(otherDataset, new ObjectRecord(another.id(), another.className(),
            another.language(), "bob", backend, List.of(), List.of(), "")), null, null));
    // run
    List<Optional<DataClayException>> outcomes = store.objects().register(groups);
    // verify: each group's fate is its own
    assertEquals(6, outcomes.size());
    assertTrue(outcomes.get(0).isEmpty());
    assertInstanceOf(ObjectAlreadyExistsException.class, outcomes.get(1).orElseThrow());
    assertTrue(outcomes.get(1).get().getMessage().contains(existing.id()), outcomes.get(1).get().getMessage());
    assertInstanceOf(AliasAlreadyExistsException.class, outcomes.get(2).orElseThrow());
    assertTrue(outcomes.get(3).isEmpty());
    assertTrue(outcomes.get(4).isEmpty(), "registering alike from the same master changes nothing");
    assertInstanceOf(ObjectAlreadyExistsException.class, outcomes.get(5).orElseThrow());
    assertFalse(outcomes.get(5).get().getMessage().contains("bob"), "the other object's dataset is not told");
    for (ObjectRecord kept : List.of(fresh1, fresh2, named)) {
      assertTrue(store.objects().find(kept.id()).isPresent(), kept.id());
    }
    for (ObjectRecord dropped : List.of(beside, namedTaken, otherDataset)) {
      assertTrue(store.objects().find(dropped.id()).isEmpty(), dropped.id());
    }
    assertEquals(named.id(), store.objects().findByAlias("alice", "new").orElseThrow().id());
    assertEquals(existing.id(), store.objects().findByAlias("alice", "taken").orElseThrow().id());
    assertEquals(backend, store.objects().find(existing.id()).orElseThrow().masterBackendId());
    assertEquals("alice", store.objects().find(another.id()).orElseThrow().dataset());
    assertEquals(3 + 3, store.objects().countObjects());
  }

  @Test
  void an_id_in_two_groups_of_one_request_is_registered_by_the_first_only() {
    // setup
    ObjectRecord shared = object("alice");
    ObjectRecord beside = object("alice");
    // run
    List<Optional<DataClayException>> outcomes = store.objects().register(List.of(
        new ObjectGroup(List.of(shared), null, null), new ObjectGroup(List.of(beside, shared), null, null)));
    // verify
    assertTrue(outcomes.get(0).isEmpty());
    assertInstanceOf(ObjectAlreadyExistsException.class, outcomes.get(1).orElseThrow());
    assertTrue(outcomes.get(1).get().getMessage().contains(shared.id()));
    assertTrue(store.objects().find(beside.id()).isEmpty());
    assertEquals(1, store.objects().countObjects());
  }

  @Test
  void an_id_registered_as_another_class_is_refused_even_from_the_same_master() {
    // setup
    ObjectRecord o = object("alice");
    Registrations.register(store, List.of(o), null, null);
    ObjectRecord otherClass = new ObjectRecord(o.id(), "app.Address", o.language(), o.dataset(), backend,
        List.of(), List.of(), "");
    ObjectRecord asVersion = new ObjectRecord(o.id(), o.className(), o.language(), o.dataset(), backend,
        List.of(), List.of(), UUID.randomUUID().toString());
    // run / verify
    assertThrows(ObjectAlreadyExistsException.class, () -> Registrations.register(store, List.of(otherClass), null,
        null));
    assertThrows(ObjectAlreadyExistsException.class, () -> Registrations.register(store, List.of(asVersion), null,
        null));
    assertEquals("app.Person", store.objects().find(o.id()).orElseThrow().className());
    assertEquals("", store.objects().find(o.id()).orElseThrow().versionOf());
  }

  @Test
  void concurrent_requests_with_colliding_ids_never_drop_another_group() throws Exception {
    // setup: writers on backends of their own; in every round each sends fresh objects and one
    // group naming the round's contested ID, which only one of them may get
    int writers = 6;
    int rounds = 15;
    List<String> masters = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      String b = UUID.randomUUID().toString();
      store.backends().upsert(new BackendRecord(b, "w" + w, "127.0.0.1", 7100 + w, List.of(Language.PYTHON), "kv"));
      masters.add(b);
    }
    List<String> contested = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      contested.add(UUID.randomUUID().toString());
    }
    AtomicIntegerArray winners = new AtomicIntegerArray(rounds);
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<List<String>>> results = new ArrayList<>();
    try {
      for (int w = 0; w < writers; w++) {
        String master = masters.get(w);
        results.add(pool.submit(() -> {
          go.await();
          List<String> mine = new ArrayList<>();
          for (int r = 0; r < rounds; r++) {
            List<ObjectGroup> groups = new ArrayList<>();
            for (int g = 0; g < 3; g++) {
              ObjectRecord a = withMaster(object("alice"), master);
              ObjectRecord b = withMaster(object("alice"), master);
              mine.add(a.id());
              mine.add(b.id());
              groups.add(new ObjectGroup(List.of(a, b), null, null));
            }
            groups.add(1, new ObjectGroup(List.of(new ObjectRecord(contested.get(r), "app.Person", Language.PYTHON,
                "alice", master, List.of(), List.of(), "")), null, null));
            List<Optional<DataClayException>> outcomes = store.objects().register(groups);
            for (int g = 0; g < groups.size(); g++) {
              if (g == 1) {
                winners.addAndGet(r, outcomes.get(g).isEmpty() ? 1 : 0);
              } else if (outcomes.get(g).isPresent()) {
                throw new AssertionError("a group of fresh objects was refused: " + outcomes.get(g).get());
              }
            }
          }
          return mine;
        }));
      }
      // run
      go.countDown();
      List<String> registered = new ArrayList<>();
      for (Future<List<String>> f : results) {
        registered.addAll(f.get(60, TimeUnit.SECONDS));
      }
      // verify: every fresh object is there, and each contested ID went to exactly one writer
      for (String id : registered) {
        assertTrue(store.objects().find(id).isPresent(), id);
      }
      for (int r = 0; r < rounds; r++) {
        assertEquals(1, winners.get(r), "round " + r);
      }
      assertEquals(registered.size() + rounds, store.objects().countObjects());
    } finally {
      pool.shutdownNow();
    }
  }

  private static ObjectRecord withMaster(ObjectRecord o, String master) {
    return new ObjectRecord(o.id(), o.className(), o.language(), o.dataset(), master, o.replicaBackendIds(),
        o.aliases(), o.versionOf());
  }

  @Test
  void an_alias_for_an_unknown_object_is_refused() {
    // run
    assertThrows(ObjectDoesNotExistException.class,
        () -> Registrations.register(store, List.of(object("alice")), "x", UUID.randomUUID().toString()));
    // verify
    assertEquals(0, store.objects().countObjects());
  }

  @Test
  void an_alias_is_unique_under_concurrent_registration_from_many_threads() throws Exception {
    // setup
    int writers = 16;
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Boolean>> results = new ArrayList<>();
    try {
      for (int i = 0; i < writers; i++) {
        ObjectRecord o = object("alice");
        Callable<Boolean> attempt = () -> {
          go.await();
          try {
            Registrations.register(store, List.of(o), "race", o.id());
            return true;
          } catch (AliasAlreadyExistsException e) {
            return false;
          }
        };
        results.add(pool.submit(attempt));
      }
      // run
      go.countDown();
      int winners = 0;
      for (Future<Boolean> r : results) {
        winners += r.get(30, TimeUnit.SECONDS) ? 1 : 0;
      }
      // verify
      assertEquals(1, winners);
      assertEquals(1, store.objects().countObjects());
      assertEquals(1, store.objects().countAliases());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void an_alias_is_unique_under_concurrent_register_objects_rpcs() throws Exception {
    // setup: a Logic Module on this database, served in-process, and one client per writer
    store.close();
    int writers = 12;
    String name = "race-" + UUID.randomUUID();
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    try (LogicModuleFixture lm = new LogicModuleFixture(url)) {
      GrpcServer server = LogicModuleServer.serving(InProcessServerBuilder.forName(name), lm.service).start();
      ManagedChannel channel = InProcessChannelBuilder.forName(name).build();
      try {
        LogicModuleClient client = new LogicModuleClient(channel, () -> lm.backendToken);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Boolean>> results = new ArrayList<>();
        for (int i = 0; i < writers; i++) {
          ObjectInfo o = ObjectInfo.newBuilder().setId(UUID.randomUUID().toString()).setClassName("app.Person")
              .setLanguage(io.dataclay.proto.Language.PYTHON).setDataset("alice").setMasterBackendId(backend).build();
          results.add(pool.submit(() -> {
            go.await();
            try {
              client.registerObjects(List.of(o), "race", o.getId());
              return true;
            } catch (AliasAlreadyExistsException e) {
              return false;
            }
          }));
        }
        // run
        go.countDown();
        int winners = 0;
        for (Future<Boolean> r : results) {
          winners += r.get(30, TimeUnit.SECONDS) ? 1 : 0;
        }
        // verify
        assertEquals(1, winners);
        LogicModuleClient admin = new LogicModuleClient(channel, () -> lm.adminToken);
        assertEquals(1, admin.getStats().getObjects());
        assertEquals(1, admin.getStats().getAliases());
      } finally {
        channel.shutdownNow();
        server.stop();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aliases_can_be_added_idempotently_and_deleted() {
    // setup
    ObjectRecord o = object("alice");
    ObjectRecord other = object("alice");
    Registrations.register(store, List.of(o, other), null, null);
    // run
    store.objects().addAlias("alice", "n1", o.id());
    store.objects().addAlias("alice", "n1", o.id());
    // verify
    assertThrows(AliasAlreadyExistsException.class, () -> store.objects().addAlias("alice", "n1", other.id()));
    assertTrue(store.objects().deleteAlias("alice", "n1"));
    assertFalse(store.objects().deleteAlias("alice", "n1"));
    store.objects().addAlias("alice", "n1", other.id());
    assertEquals(other.id(), store.objects().findByAlias("alice", "n1").orElseThrow().id());
  }

  @Test
  void only_the_master_changes_where_an_objects_copies_are_and_a_refusal_changes_nothing() {
    // setup
    String second = UUID.randomUUID().toString();
    store.backends().upsert(new BackendRecord(second, "b2", "127.0.0.1", 7002, List.of(Language.PYTHON), "kv"));
    ObjectRecord mine = object("alice");
    ObjectRecord other = object("alice");
    Registrations.register(store, List.of(mine, other), null, null);
    store.objects().addReplicas(List.of(mine.id(), other.id()), second, backend);
    // run / verify: the replica's backend is not the master of either object
    assertThrows(PermissionDeniedException.class,
        () -> store.objects().removeReplicas(List.of(mine.id(), other.id()), second, second));
    assertThrows(PermissionDeniedException.class,
        () -> store.objects().setMaster(List.of(mine.id()), second, second));
    assertThrows(PermissionDeniedException.class,
        () -> store.objects().addReplicas(List.of(other.id()), second, second));
    assertEquals(List.of(second), store.objects().find(mine.id()).orElseThrow().replicaBackendIds());
    assertEquals(backend, store.objects().find(mine.id()).orElseThrow().masterBackendId());
    assertEquals(List.of(second), store.objects().find(other.id()).orElseThrow().replicaBackendIds());
  }

  @Test
  void a_promotion_moves_the_master_to_a_replica_raises_the_old_masters_term_and_records_both_to_dos() {
    // setup
    String second = UUID.randomUUID().toString();
    String third = UUID.randomUUID().toString();
    ObjectRecord replicated = object("alice");
    ObjectRecord unreplicated = object("alice");
    Registrations.register(store, List.of(replicated, unreplicated), null, null);
    store.objects().addReplicas(List.of(replicated.id()), second, backend);
    store.objects().addReplicas(List.of(replicated.id()), third, backend);
    // run: the unreplicated object's chosen backend holds no replica of it, so it stays
    List<FailoverStore.Move> done = store.failover().promote(backend,
        Map.of(replicated.id(), second, unreplicated.id(), second));
    List<FailoverStore.Move> again = store.failover().promote(backend, Map.of(replicated.id(), third));
    // verify
    assertEquals(List.of(new FailoverStore.Move(replicated.id(), second)), done);
    assertEquals(List.of(), again, "an object no longer mastered there is left as it is");
    ObjectRecord now = store.objects().find(replicated.id()).orElseThrow();
    assertEquals(second, now.masterBackendId());
    assertEquals(List.of(third), now.replicaBackendIds());
    assertEquals(backend, store.objects().find(unreplicated.id()).orElseThrow().masterBackendId());
    assertEquals(Map.of(backend, 1L), store.failover().terms());
    assertEquals(List.of(new FailoverStore.Move(replicated.id(), second)), store.failover().pendingPromotions());
    assertEquals(List.of(third), store.failover().replicasOf(replicated.id()));
    assertEquals(List.of(new FailoverStore.Move(replicated.id(), second)), store.failover().demotions(backend, 10));
    // the old master is fenced: it may no longer drop a replica
    assertThrows(PermissionDeniedException.class,
        () -> store.objects().removeReplicas(List.of(replicated.id()), third, backend));
    // confirmations and applied demotions are forgotten
    store.failover().confirmPromotions(second, List.of(replicated.id()));
    assertEquals(List.of(new FailoverStore.Move(replicated.id(), second)),
        store.failover().applied(backend, List.of(replicated.id())));
    assertEquals(List.of(), store.failover().pendingPromotions());
    assertEquals(List.of(), store.failover().demotions(backend, 10));
  }

  @Test
  void removing_objects_drops_their_replicas_and_aliases_and_leaves_every_other_row() {
    // setup
    String second = UUID.randomUUID().toString();
    store.backends().upsert(new BackendRecord(second, "b2", "127.0.0.1", 7002, List.of(Language.PYTHON), "kv"));
    ObjectRecord gone = object("alice");
    ObjectRecord kept = object("alice");
    Registrations.register(store, List.of(gone, kept), "gone-alias", gone.id());
    store.objects().addAlias("alice", "kept-alias", kept.id());
    store.objects().addReplicas(List.of(gone.id(), kept.id()), second, backend);
    // run
    store.objects().removeObjects(List.of(gone.id(), UUID.randomUUID().toString()));
    // verify
    assertTrue(store.objects().find(gone.id()).isEmpty());
    assertTrue(store.objects().findByAlias("alice", "gone-alias").isEmpty());
    assertEquals(List.of(second), store.objects().find(kept.id()).orElseThrow().replicaBackendIds());
    assertEquals(kept.id(), store.objects().findByAlias("alice", "kept-alias").orElseThrow().id());
    assertEquals(1, store.objects().countObjects());
    assertEquals(1, store.objects().countAliases());
    assertEquals(List.of(kept.id()), store.objects().replicatedFrom(backend).stream().map(ObjectRecord::id).toList());
  }

  @Test
  void a_collection_reads_every_object_with_its_master_the_aliased_ones_and_locations() {
    // setup
    String second = UUID.randomUUID().toString();
    store.backends().upsert(new BackendRecord(second, "b2", "127.0.0.1", 7002, List.of(Language.PYTHON), "kv"));
    ObjectRecord named = object("alice");
    ObjectRecord plain = object("alice");
    ObjectRecord version = new ObjectRecord(UUID.randomUUID().toString(), "app.Person", Language.PYTHON, "alice",
        second, List.of(), List.of(), named.id());
    Registrations.register(store, List.of(named, plain, version), "n1", named.id());
    store.objects().addAlias("alice", "n2", named.id());
    store.objects().addReplicas(List.of(plain.id()), second, backend);
    // run
    Map<String, String> masters = new HashMap<>();
    store.objects().forEachObject(masters::put);
    Map<String, List<String>> where = store.objects().locations(List.of(named.id(), plain.id(),
        UUID.randomUUID().toString()));
    // verify
    assertEquals(Map.of(named.id(), backend, plain.id(), backend, version.id(), second), masters);
    assertEquals(List.of(named.id()), store.objects().aliasedObjectIds());
    assertEquals(named.id(), store.objects().find(version.id()).orElseThrow().versionOf());
    assertEquals(Set.of(backend, second), store.objects().backendsHoldingObjects());
    assertEquals(Map.of(named.id(), List.of(backend), plain.id(), List.of(backend, second)), where);
  }

  @Test
  void a_batch_of_ten_thousand_objects_registers_in_one_call() {
    // setup
    List<ObjectRecord> batch = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      batch.add(object("alice"));
    }
    // run
    Registrations.register(store, batch, "first", batch.get(0).id());
    // verify
    assertEquals(10_000, store.objects().countObjects());
    assertEquals(batch.get(9_999).id(), store.objects().find(batch.get(9_999).id()).orElseThrow().id());
  }

  @Test
  void everything_written_is_still_there_after_close_and_reopen() {
    // setup
    store.accounts().create(account("bob"));
    store.accounts().grant(rw("shared", "alice", "bob"));
    store.sessions().insert(new SessionRecord("tok", "bob", "shared", Long.MAX_VALUE, false, false, null));
    store.models().register(model("shop", "alice", Language.PYTHON, "shop/a.py"));
    ObjectRecord o = object("shared");
    Registrations.register(store, List.of(o), "kept", o.id());
    // run
    MetadataStore again = reopen();
    // verify
    assertEquals(List.of(rw("shared", "alice", "bob")), again.accounts().contractsTo("bob"));
    assertEquals("shared", again.sessions().find("tok").orElseThrow().dataset());
    assertEquals(1, again.models().find("shop").orElseThrow().version());
    assertEquals(backend, again.backends().all().get(0).id());
    assertEquals(o.id(), again.objects().findByAlias("shared", "kept").orElseThrow().id());
  }
}
