package io.dataclay.logic.listing;

import io.dataclay.common.Language;
import io.dataclay.exceptions.DatasetDoesNotExistException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.metadata.ContractRecord;
import io.dataclay.logic.metadata.ListingStore;
import io.dataclay.logic.metadata.ObjectGroup;
import io.dataclay.logic.metadata.ObjectRecord;
import io.dataclay.testing.LogicModuleFixture;
import io.dataclay.testing.SqliteLogicModule;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** ListDatasets, ListAliases and ListObjects: who sees what, paging, and hostile input. */
@Timeout(120)
class ListingRulesTest {
  @RegisterExtension
  final SqliteLogicModule sqlite = new SqliteLogicModule();
  /** This test's Logic Module, set by {@link #sqlite} before each test. */
  private LogicModuleFixture lm;
  private String alice;
  private String bob;
  private String backend;

  @BeforeEach
  void start() {
    alice = lm.user("alice");
    bob = lm.user("bob");
    lm.user("carol");
    backend = lm.backend(7001);
  }

  private ObjectRecord object(String dataset, String className) {
    return new ObjectRecord(UUID.randomUUID().toString(), className, Language.PYTHON, dataset, backend, List.of(),
        List.of(), "");
  }

  /** Registers one object of {@code className} in {@code dataset} named {@code alias} (null: none). */
  private ObjectRecord stored(String dataset, String className, String alias) {
    ObjectRecord o = object(dataset, className);
    lm.register(lm.backendToken, List.of(o), alias, alias == null ? null : o.id());
    return o;
  }

  private static <T> List<String> names(Listing.Page<T> page, Function<T, String> name) {
    return page.items().stream().map(name).toList();
  }

  /** Every entry of a listing, page after page of {@code size}; fails if it does not end. */
  private <T> List<T> all(Function<String, Listing.Page<T>> page) {
    List<T> out = new ArrayList<>();
    String token = "";
    for (int pages = 0; pages < 10_000; pages++) {
      Listing.Page<T> p = page.apply(token);
      out.addAll(p.items());
      if (p.nextPageToken().isEmpty()) {
        return out;
      }
      token = p.nextPageToken();
    }
    throw new AssertionError("the listing did not end");
  }

  @Test
  void a_user_sees_its_own_datasets_and_those_of_contracts_in_force_with_its_access() {
    // setup: bob grants alice a read-only contract ending in an hour; carol grants nothing
    lm.service.newDataContract(alice, LogicModuleFixture.contract("alice.notes", "alice"));
    long ends = lm.clock.millis() + 3_600_000;
    lm.service.newDataContract(bob, new ContractRecord("bob.shared", "", "alice", true, 0, ends));
    lm.service.newDataContract(bob, LogicModuleFixture.contract("bob.private", "carol"));
    stored("alice", "app.Person", "p1");
    stored("alice", "app.Person", null);
    // run
    Listing.Page<Listing.Dataset> page = lm.service.listDatasets(alice, 0, "", true);
    // verify
    assertEquals(List.of(
        new Listing.Dataset("alice", "alice", Listing.Access.OWNER, 0, 2),
        new Listing.Dataset("alice.notes", "alice", Listing.Access.OWNER, 0, 0),
        new Listing.Dataset("bob.shared", "bob", Listing.Access.READ_ONLY, ends, 0)), page.items());
    assertEquals("", page.nextPageToken());
    assertEquals(-1, lm.service.listDatasets(alice, 0, "", false).items().get(0).objects(), "not counted");
  }

  @Test
  void expired_revoked_and_future_contracts_hide_their_datasets() {
    // setup
    long now = lm.clock.millis();
    lm.service.newDataContract(bob, new ContractRecord("bob.brief", "", "alice", false, 0, now + 1_000));
    lm.service.newDataContract(bob, new ContractRecord("bob.later", "", "alice", false, now + 60_000, 0));
    lm.service.newDataContract(bob, LogicModuleFixture.contract("bob.revoked", "alice"));
    lm.service.newDataContract(bob, LogicModuleFixture.contract("bob.kept", "alice"));
    List<String> before = names(lm.service.listDatasets(alice, 0, "", false), Listing.Dataset::name);
    // run
    lm.service.revokeDataContract(bob, "bob.revoked", "alice");
    lm.clock.advance(java.time.Duration.ofSeconds(2));
    // verify
    assertEquals(List.of("alice", "bob.brief", "bob.kept", "bob.revoked"), before);
    assertEquals(List.of("alice", "bob.kept"), names(lm.service.listDatasets(alice, 0, "", false),
        Listing.Dataset::name));
    assertThrows(PermissionDeniedException.class, () -> lm.service.listAliases(alice, "", "bob.brief", 0, ""));
  }

  @Test
  void an_administrator_sees_every_dataset_and_what_it_holds_with_no_access_of_its_own() {
    // setup
    lm.service.newDataContract(bob, LogicModuleFixture.contract("bob.private", "carol"));
    ObjectRecord secret = stored("bob.private", "app.Secret", "s1");
    // run
    List<Listing.Dataset> seen = lm.service.listDatasets(lm.adminToken, 0, "", true).items();
    List<ListingStore.AliasRow> aliases = lm.service.listAliases(lm.adminToken, "s*", "bob.private", 0, "").items();
    // verify
    Listing.Dataset priv = seen.stream().filter(d -> d.name().equals("bob.private")).findFirst().orElseThrow();
    assertEquals(new Listing.Dataset("bob.private", "bob", Listing.Access.NONE, 0, 1), priv);
    assertTrue(names(lm.service.listDatasets(lm.adminToken, 0, "", false), Listing.Dataset::name)
        .containsAll(List.of("admin", "alice", "bob", "carol")));
    assertEquals(List.of(secret.id()), aliases.stream().map(ListingStore.AliasRow::objectId).toList());
    assertThrows(DatasetDoesNotExistException.class,
        () -> lm.service.listAliases(lm.adminToken, "", "no.such", 0, ""));
  }

  @Test
  void aliases_match_the_glob_only_in_datasets_the_caller_may_see() {
    // setup
    lm.service.newDataContract(bob, LogicModuleFixture.contract("bob.shared", "alice"));
    ObjectRecord mine = stored("alice", "app.Person", "run_1");
    stored("alice", "app.Person", "runX1");
    ObjectRecord shared = stored("bob.shared", "app.Car", "run_2");
    stored("bob", "app.Person", "run_3");
    // run
    List<ListingStore.AliasRow> underscore = lm.service.listAliases(alice, "run_?", "", 0, "").items();
    List<ListingStore.AliasRow> any = lm.service.listAliases(alice, "run*", "", 0, "").items();
    // verify: '_' is itself, '?' one character; bob's own dataset is not alice's to see
    assertEquals(List.of(new ListingStore.AliasRow("alice", "run_1", mine.id(), "app.Person", Language.PYTHON,
        backend), new ListingStore.AliasRow("bob.shared", "run_2", shared.id(), "app.Car", Language.PYTHON, backend)),
        underscore);
    assertEquals(List.of("runX1", "run_1", "run_2"), names(new Listing.Page<>(any, ""), ListingStore.AliasRow::alias));
    assertEquals(List.of("run_2"), names(lm.service.listAliases(alice, "*", "bob.shared", 0, ""),
        ListingStore.AliasRow::alias));
  }

  @Test
  void another_users_dataset_is_refused_in_the_words_of_one_that_does_not_exist() {
    // setup
    stored("bob", "app.Person", "b1");
    // run
    String others = assertThrows(PermissionDeniedException.class,
        () -> lm.service.listAliases(alice, "*", "bob", 0, "")).getMessage();
    String missing = assertThrows(PermissionDeniedException.class,
        () -> lm.service.listAliases(alice, "*", "dave", 0, "")).getMessage();
    // verify
    assertEquals(others.replace("'bob'", "'X'"), missing.replace("'dave'", "'X'"));
    assertThrows(PermissionDeniedException.class, () -> lm.service.listObjects(alice, "app.Person", "bob", 0, ""));
  }

  @Test
  void pages_of_aliases_cover_every_one_once_across_datasets_and_a_page_is_never_larger_than_asked() {
    // setup: 7 aliases in alice, 6 in a granted dataset
    lm.service.newDataContract(bob, LogicModuleFixture.contract("bob.shared", "alice"));
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      stored("alice", "app.Person", "a" + i);
      expected.add("alice/a" + i);
    }
    for (int i = 0; i < 6; i++) {
      stored("bob.shared", "app.Person", "b" + i);
      expected.add("bob.shared/b" + i);
    }
    // run
    List<Integer> sizes = new ArrayList<>();
    List<ListingStore.AliasRow> seen = all(token -> {
      Listing.Page<ListingStore.AliasRow> p = lm.service.listAliases(alice, "", "", 3, token);
      sizes.add(p.items().size());
      return p;
    });
    // verify
    assertEquals(expected, seen.stream().map(a -> a.dataset() + "/" + a.alias()).toList());
    assertTrue(sizes.stream().allMatch(n -> n <= 3), sizes.toString());
    assertEquals(5, sizes.size(), "13 aliases in pages of 3, the last one knowing it is last: " + sizes);
  }

  @Test
  void a_contract_revoked_between_pages_hides_the_rest_of_its_dataset() {
    // setup
    lm.service.newDataContract(bob, LogicModuleFixture.contract("bob.shared", "alice"));
    for (int i = 0; i < 4; i++) {
      stored("bob.shared", "app.Person", "s" + i);
    }
    stored("carol", "app.Person", "c0");
    Listing.Page<ListingStore.AliasRow> first = lm.service.listAliases(alice, "", "", 2, "");
    // run: the token now points into a dataset alice may no longer see
    lm.service.revokeDataContract(bob, "bob.shared", "alice");
    Listing.Page<ListingStore.AliasRow> second = lm.service.listAliases(alice, "", "", 2, first.nextPageToken());
    // verify
    assertEquals(List.of("s0", "s1"), names(first, ListingStore.AliasRow::alias));
    assertEquals(List.of(), second.items());
    assertEquals("", second.nextPageToken());
    assertThrows(PermissionDeniedException.class,
        () -> lm.service.listAliases(alice, "", "bob.shared", 2, ""));
  }

  @Test
  void a_token_works_only_for_the_listing_and_the_account_it_came_from() {
    // setup
    for (int i = 0; i < 3; i++) {
      stored("alice", "app.Person", "p" + i);
    }
    String token = lm.service.listAliases(alice, "p*", "", 1, "").nextPageToken();
    assertFalse(token.isEmpty());
    // run / verify
    assertThrows(InvalidArgumentException.class, () -> lm.service.listAliases(alice, "q*", "", 1, token));
    assertThrows(InvalidArgumentException.class, () -> lm.service.listAliases(bob, "p*", "", 1, token));
    assertThrows(InvalidArgumentException.class, () -> lm.service.listObjects(alice, "", "", 1, token));
    assertThrows(InvalidArgumentException.class, () -> lm.service.listDatasets(alice, 1, token, false));
    for (String forged : List.of("x", "!!!!", "AAAA", token + "A", token.substring(0, token.length() - 2),
        "A".repeat(5000), "' OR 1=1 --")) {
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
          () -> lm.service.listAliases(alice, "p*", "", 1, forged), forged);
      assertTrue(e.getMessage().startsWith("page_token: "), e.getMessage());
    }
    assertEquals(List.of("p1"), names(lm.service.listAliases(alice, "p*", "", 1, token), ListingStore.AliasRow::alias));
  }

  @Test
  void bad_sizes_and_patterns_are_refused_naming_the_field_and_big_pages_are_capped() {
    // setup: more aliases than the largest page, in one request
    List<ObjectGroup> groups = new ArrayList<>();
    for (int i = 0; i < ListingService.MAX_PAGE_SIZE + 5; i++) {
      ObjectRecord o = object("alice", "app.Person");
      groups.add(new ObjectGroup(List.of(o), "n" + i, o.id()));
    }
    lm.service.registerObjects(lm.backendToken, groups).forEach(outcome -> assertTrue(outcome.isEmpty()));
    // run
    Listing.Page<ListingStore.AliasRow> big = lm.service.listAliases(alice, "", "", Integer.MAX_VALUE, "");
    Listing.Page<ListingStore.AliasRow> usual = lm.service.listAliases(alice, "", "", 0, "");
    // verify
    assertEquals(ListingService.MAX_PAGE_SIZE, big.items().size());
    assertFalse(big.nextPageToken().isEmpty());
    assertEquals(ListingService.DEFAULT_PAGE_SIZE, usual.items().size());
    assertTrue(assertThrows(InvalidArgumentException.class, () -> lm.service.listAliases(alice, "", "", -1, ""))
        .getMessage().startsWith("page_size: "));
    assertTrue(assertThrows(InvalidArgumentException.class, () -> lm.service.listAliases(alice, "a\u0000b", "", 0, ""))
        .getMessage().startsWith("pattern: "));
    assertTrue(assertThrows(InvalidArgumentException.class, () -> lm.service.listAliases(alice, "a".repeat(513), "",
        0, "")).getMessage().startsWith("pattern: "));
    assertTrue(assertThrows(InvalidArgumentException.class, () -> lm.service.listAliases(alice, "", "../etc", 0, ""))
        .getMessage().startsWith("dataset: "));
    assertTrue(assertThrows(InvalidArgumentException.class, () -> lm.service.listObjects(alice, "x'; DROP", "", 0,
        "")).getMessage().startsWith("class_name: "));
  }

  @Test
  void objects_of_a_class_list_with_their_aliases_across_pages_and_datasets() {
    // setup
    lm.service.newDataContract(bob, LogicModuleFixture.contract("bob.shared", "alice"));
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      expected.add("alice/" + stored("alice", "app.Person", i == 0 ? "first" : null).id());
    }
    stored("alice", "app.Car", "car");
    for (int i = 0; i < 3; i++) {
      expected.add("bob.shared/" + stored("bob.shared", "app.Person", null).id());
    }
    stored("bob", "app.Person", "hidden");
    expected.sort(null);
    // run
    List<ObjectRecord> people = all(t -> lm.service.listObjects(alice, "app.Person", "", 2, t));
    List<ObjectRecord> everything = all(t -> lm.service.listObjects(alice, "", "alice", 2, t));
    // verify
    assertEquals(expected, people.stream().map(o -> o.dataset() + "/" + o.id()).toList());
    assertEquals(List.of("first"), people.stream().filter(o -> !o.aliases().isEmpty()).findFirst().orElseThrow()
        .aliases());
    assertEquals(5, everything.size());
    assertEquals("app.Car", everything.get(0).className());
    assertTrue(lm.service.listObjects(alice, "app.Nothing", "", 0, "").items().isEmpty());
  }

  /** Registers a version of {@code original} of {@code className} in {@code dataset}. */
  private ObjectRecord version(ObjectRecord original, String dataset, String className) {
    ObjectRecord v = new ObjectRecord(UUID.randomUUID().toString(), className, Language.PYTHON, dataset, backend,
        List.of(), List.of(), original.id());
    lm.register(lm.backendToken, List.of(v), null, null);
    return v;
  }

  @Test
  void the_versions_of_an_object_list_from_every_dataset_the_caller_sees_narrowed_by_class_and_dataset() {
    // setup: versions in alice's dataset, in one bob granted her, and in one she may not see
    lm.service.newDataContract(bob, LogicModuleFixture.contract("bob.shared", "alice"));
    ObjectRecord original = stored("alice", "app.Person", null);
    List<ObjectRecord> visible = new ArrayList<>(List.of(version(original, "alice", "app.Person"),
        version(original, "alice", "app.Person"), version(original, "alice", "app.Car"),
        version(original, "bob.shared", "app.Person"), version(original, "bob.shared", "app.Person")));
    version(original, "bob", "app.Person");
    stored("alice", "app.Person", null);
    visible.sort(java.util.Comparator.comparing(ObjectRecord::dataset).thenComparing(ObjectRecord::className)
        .thenComparing(ObjectRecord::id));
    // run
    List<Integer> sizes = new ArrayList<>();
    List<ObjectRecord> all = all(t -> {
      Listing.Page<ObjectRecord> p = lm.service.listObjects(alice, "", "", original.id(), 2, t);
      sizes.add(p.items().size());
      return p;
    });
    List<ObjectRecord> people = all(t -> lm.service.listObjects(alice, "app.Person", "", original.id(), 1, t));
    List<ObjectRecord> shared = all(t -> lm.service.listObjects(alice, "", "bob.shared", original.id(), 0, t));
    // verify
    assertEquals(visible.stream().map(ObjectRecord::id).toList(), all.stream().map(ObjectRecord::id).toList());
    assertEquals(List.of(2, 2, 1), sizes);
    assertTrue(all.stream().allMatch(o -> o.versionOf().equals(original.id())));
    assertEquals(visible.stream().filter(o -> o.className().equals("app.Person")).map(ObjectRecord::id).toList(),
        people.stream().map(ObjectRecord::id).toList());
    assertEquals(visible.subList(3, 5).stream().map(ObjectRecord::id).toList(),
        shared.stream().map(ObjectRecord::id).toList());
  }

  @Test
  void listing_the_versions_of_an_object_the_caller_may_not_read_is_answered_as_get_object_info_answers() {
    // setup
    ObjectRecord bobs = stored("bob", "app.Person", null);
    version(bobs, "bob", "app.Person");
    ObjectRecord mine = stored("alice", "app.Person", null);
    version(mine, "alice", "app.Person");
    version(mine, "alice", "app.Person");
    String unknown = UUID.randomUUID().toString();
    String plainToken = lm.service.listObjects(alice, "", "", 1, "").nextPageToken();
    String versionsToken = lm.service.listObjects(alice, "", "", mine.id(), 1, "").nextPageToken();
    // run
    ObjectDoesNotExistException hidden = assertThrows(ObjectDoesNotExistException.class,
        () -> lm.service.listObjects(alice, "", "", bobs.id(), 0, ""));
    ObjectDoesNotExistException missing = assertThrows(ObjectDoesNotExistException.class,
        () -> lm.service.listObjects(alice, "", "", unknown, 0, ""));
    // verify
    assertEquals(assertThrows(ObjectDoesNotExistException.class, () -> lm.service.getObjectInfo(alice, bobs.id()))
        .getMessage(), hidden.getMessage());
    assertEquals(assertThrows(ObjectDoesNotExistException.class, () -> lm.service.getObjectInfo(alice, unknown))
        .getMessage(), missing.getMessage());
    assertTrue(assertThrows(InvalidArgumentException.class, () -> lm.service.listObjects(alice, "", "", "nope", 0,
        "")).getMessage().startsWith("version_of: "));
    assertFalse(plainToken.isEmpty() || versionsToken.isEmpty());
    assertThrows(InvalidArgumentException.class, () -> lm.service.listObjects(alice, "", "", mine.id(), 1,
        plainToken));
    assertThrows(InvalidArgumentException.class, () -> lm.service.listObjects(alice, "", "", 1, versionsToken));
    assertEquals(1, lm.service.listObjects(alice, "", "", mine.id(), 1, versionsToken).items().size());
  }

  @Test
  void a_page_looks_into_a_bounded_number_of_datasets_and_then_hands_on_a_token() {
    // setup: more datasets than a page looks into, the one alias in the last of them
    for (int i = 0; i < ListingService.MAX_DATASETS_PER_PAGE + 10; i++) {
      lm.store.accounts().grant(new ContractRecord(String.format("zed.d%04d", i), "admin", "admin", false, 0, 0));
    }
    String last = String.format("zed.d%04d", ListingService.MAX_DATASETS_PER_PAGE + 9);
    ObjectRecord far = stored(last, "app.Person", "far");
    // run
    Listing.Page<ListingStore.AliasRow> first = lm.service.listAliases(lm.adminToken, "far", "", 10, "");
    List<ListingStore.AliasRow> found = all(t -> lm.service.listAliases(lm.adminToken, "far", "", 10, t));
    // verify
    assertTrue(first.items().isEmpty());
    assertFalse(first.nextPageToken().isEmpty());
    assertEquals(List.of(far.id()), found.stream().map(ListingStore.AliasRow::objectId).toList());
  }

  @Test
  void backend_sessions_list_nothing() {
    assertThrows(PermissionDeniedException.class, () -> lm.service.listDatasets(lm.backendToken, 0, "", false));
    assertThrows(PermissionDeniedException.class, () -> lm.service.listAliases(lm.backendToken, "", "", 0, ""));
    assertThrows(PermissionDeniedException.class, () -> lm.service.listObjects(lm.backendToken, "", "", 0, ""));
  }

  @Test
  void pages_of_datasets_end_with_an_empty_token() {
    // setup
    for (String name : List.of("alice.a", "alice.b", "alice.c", "alice.d")) {
      lm.service.newDataContract(alice, LogicModuleFixture.contract(name, "alice"));
    }
    // run
    List<Listing.Dataset> seen = all(t -> lm.service.listDatasets(alice, 2, t, false));
    // verify
    assertEquals(List.of("alice", "alice.a", "alice.b", "alice.c", "alice.d"),
        seen.stream().map(Listing.Dataset::name).toList());
  }

  @Test
  void a_contract_an_owner_holds_on_its_own_dataset_is_listed_once() {
    // setup: what dataclaycmd NewDataset does, then a contract for bob
    lm.service.newDataContract(alice, LogicModuleFixture.contract("alice.notes", "alice"));
    lm.service.newDataContract(alice, LogicModuleFixture.contract("alice.notes", "bob"));
    lm.service.newDataContract(bob, LogicModuleFixture.contract("bob.shared", "alice"));
    // run
    List<ContractRecord> contracts = lm.service.listDataContracts(alice);
    // verify
    assertEquals(List.of("alice.notes->alice", "alice.notes->bob", "bob.shared->alice"),
        contracts.stream().map(c -> c.dataset() + "->" + c.beneficiary()).toList());
  }
}
