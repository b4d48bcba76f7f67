package io.dataclay.logic.metadata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.common.Language;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What listing must do on every metadata database (ListingStore): glob patterns mean the same on
 * SQLite and PostgreSQL, whatever characters they hold, and keyset pages cover each row once.
 * Aliases here are written straight to the store, so they may hold characters the service's rules
 * refuse: the point is that no character of a pattern reaches the SQL as anything but itself.
 */
@Timeout(120)
abstract class ListingConformance {
  private static final List<String> TRICKY = List.of("abc", "a_c", "a%c", "a\\c", "a'c", "a!c", "a[b]c", "A_C",
      "ab", "abcd", "x'); DROP TABLE aliases; --", "a*c", "a?c");

  private MetadataStore store;
  private final String backend = UUID.randomUUID().toString();

  /** The JDBC URL of a new, empty database. */
  protected abstract String freshDatabaseUrl() throws Exception;

  @BeforeEach
  void openFreshStore() throws Exception {
    store = MetadataStore.open(freshDatabaseUrl(), MetadataSync.NORMAL);
    store.accounts().create(new AccountRecord("alice", "h", "s", 1, false));
    store.backends().upsert(new BackendRecord(backend, "b1", "127.0.0.1", 7001, List.of(Language.PYTHON), "kv"));
  }

  @AfterEach
  void close() {
    store.close();
  }

  private ObjectRecord object(String dataset, String className) {
    return new ObjectRecord(UUID.randomUUID().toString(), className, Language.PYTHON, dataset, backend, List.of(),
        List.of(), "");
  }

  private Set<String> matching(String glob) {
    return store.listings().aliases("alice", glob, "", 1000).stream().map(ListingStore.AliasRow::alias)
        .collect(Collectors.toSet());
  }

  @Test
  void glob_wildcards_are_star_and_question_mark_and_every_other_character_is_itself() {
    // setup
    for (String alias : TRICKY) {
      ObjectRecord o = object("alice", "app.Thing");
      Registrations.register(store, List.of(o), alias, o.id());
    }
    // run / verify: SQL LIKE and GLOB characters, quotes and backslashes are literal; case counts
    assertEquals(Set.of("a_c"), matching("a_c"));
    assertEquals(Set.of("a%c"), matching("a%c"));
    assertEquals(Set.of("a\\c"), matching("a\\c"));
    assertEquals(Set.of("a'c"), matching("a'c"));
    assertEquals(Set.of("a!c"), matching("a!c"));
    assertEquals(Set.of("a[b]c"), matching("a[b]c"));
    assertEquals(Set.of("A_C"), matching("A_C"));
    assertEquals(Set.of("x'); DROP TABLE aliases; --"), matching("x'); DROP TABLE aliases; --"));
    assertEquals(Set.of(), matching("a%"));
    assertEquals(Set.of(), matching("%"));
    assertEquals(Set.of(), matching("_"));
    assertEquals(Set.of("abc", "a_c", "a%c", "a\\c", "a'c", "a!c", "a*c", "a?c"), matching("a?c"));
    assertEquals(Set.of("abc", "a_c", "a%c", "a\\c", "a'c", "a!c", "a[b]c", "a*c", "a?c"), matching("*c"));
    assertEquals(Set.of("abcd"), matching("a??d"));
    assertEquals(Set.of("ab", "abc", "abcd"), matching("ab*"));
    assertEquals(new HashSet<>(TRICKY), matching(null));
    assertEquals(TRICKY.size(), store.objects().countAliases());
  }

  @Test
  void alias_pages_after_a_key_cover_every_alias_once_in_one_order() {
    // setup
    List<String> written = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      ObjectRecord o = object("alice", "app.Thing");
      written.add("item-" + (char) ('a' + i));
      Registrations.register(store, List.of(o), written.get(i), o.id());
    }
    // run
    List<String> seen = new ArrayList<>();
    String after = "";
    while (true) {
      List<ListingStore.AliasRow> page = store.listings().aliases("alice", "item-*", after, 7);
      if (page.isEmpty()) {
        break;
      }
      page.forEach(a -> seen.add(a.alias()));
      after = page.get(page.size() - 1).alias();
    }
    // verify
    assertEquals(written, seen);
  }

  @Test
  void objects_page_by_class_then_id_with_their_own_datasets_aliases_and_counts() {
    // setup
    store.accounts().grant(new ContractRecord("alice.other", "alice", "alice", false, 0, 0));
    List<ObjectRecord> people = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      people.add(object("alice", "app.Person"));
    }
    ObjectRecord car = object("alice", "app.Car");
    ObjectRecord elsewhere = object("alice.other", "app.Person");
    Registrations.register(store, people, "boss", people.get(0).id());
    Registrations.register(store, List.of(car), null, null);
    Registrations.register(store, List.of(elsewhere), null, null);
    // run
    List<ObjectRecord> firstPeople = store.listings().objects("alice", "app.Person", "", "", 3);
    ObjectRecord third = firstPeople.get(2);
    List<ObjectRecord> restPeople = store.listings().objects("alice", "app.Person", "app.Person", third.id(), 3);
    List<ObjectRecord> all = store.listings().objects("alice", null, "", "", 100);
    List<ObjectRecord> afterCar = store.listings().objects("alice", null, "app.Car", car.id(), 100);
    // verify
    List<String> personIds = people.stream().map(ObjectRecord::id).sorted().toList();
    assertEquals(personIds.subList(0, 3), firstPeople.stream().map(ObjectRecord::id).toList());
    assertEquals(personIds.subList(3, 5), restPeople.stream().map(ObjectRecord::id).toList());
    assertEquals(6, all.size());
    assertEquals(car.id(), all.get(0).id(), "app.Car sorts before app.Person");
    assertEquals(personIds, afterCar.stream().map(ObjectRecord::id).toList());
    ObjectRecord boss = all.stream().filter(o -> o.id().equals(people.get(0).id())).findFirst().orElseThrow();
    assertEquals(List.of("boss"), boss.aliases());
    assertEquals(backend, boss.masterBackendId());
    assertTrue(all.stream().allMatch(o -> o.dataset().equals("alice")));
    assertEquals(Map.of("alice", 6L, "alice.other", 1L, "nothing", 0L),
        store.listings().objectCounts(List.of("alice", "alice.other", "nothing")));
  }

  private ObjectRecord versionOf(ObjectRecord original, String dataset, String className) {
    return new ObjectRecord(UUID.randomUUID().toString(), className, Language.PYTHON, dataset, backend, List.of(),
        List.of(), original.id());
  }

  @Test
  void versions_of_an_object_page_by_dataset_class_then_id_across_datasets_and_nothing_else() {
    // setup: five versions in two datasets, of two classes; an unrelated object and another's version
    store.accounts().grant(new ContractRecord("alice.other", "alice", "alice", false, 0, 0));
    ObjectRecord original = object("alice", "app.Person");
    ObjectRecord other = object("alice", "app.Person");
    Registrations.register(store, List.of(original, other), null, null);
    List<ObjectRecord> versions = List.of(versionOf(original, "alice", "app.Person"),
        versionOf(original, "alice", "app.Person"), versionOf(original, "alice", "app.Car"),
        versionOf(original, "alice.other", "app.Person"), versionOf(original, "alice.other", "app.Person"));
    Registrations.register(store, versions.subList(0, 1), "draft", versions.get(0).id());
    Registrations.register(store, versions.subList(1, 5), null, null);
    Registrations.register(store, List.of(object("alice", "app.Person"), versionOf(other, "alice", "app.Person")),
        null, null);
    // run
    List<ObjectRecord> all = store.listings().versions(original.id(), "", "", "", 100);
    List<String> paged = new ArrayList<>();
    String[] after = {"", "", ""};
    for (int pages = 0; pages < 10; pages++) {
      List<ObjectRecord> page = store.listings().versions(original.id(), after[0], after[1], after[2], 2);
      if (page.isEmpty()) {
        break;
      }
      page.forEach(o -> paged.add(o.id()));
      ObjectRecord last = page.get(page.size() - 1);
      after = new String[] {last.dataset(), last.className(), last.id()};
    }
    // verify
    List<String> expected = versions.stream()
        .sorted(java.util.Comparator.comparing(ObjectRecord::dataset).thenComparing(ObjectRecord::className)
            .thenComparing(ObjectRecord::id))
        .map(ObjectRecord::id).toList();
    assertEquals(expected, all.stream().map(ObjectRecord::id).toList());
    assertEquals(expected, paged);
    assertTrue(all.stream().allMatch(o -> o.versionOf().equals(original.id())));
    ObjectRecord draft = all.stream().filter(o -> o.id().equals(versions.get(0).id())).findFirst().orElseThrow();
    assertEquals(List.of("draft"), draft.aliases());
    assertEquals(List.of("alice", "alice", "alice", "alice.other", "alice.other"),
        all.stream().map(ObjectRecord::dataset).toList());
    assertEquals(List.of(), store.listings().versions(UUID.randomUUID().toString(), "", "", "", 100));
  }

  @Test
  void dataset_names_and_owners_page_by_name() {
    // setup
    store.accounts().grant(new ContractRecord("alice.b", "alice", "alice", false, 0, 0));
    store.accounts().grant(new ContractRecord("alice.a", "alice", "alice", false, 0, 0));
    // run
    List<ListingStore.DatasetRow> first = store.listings().datasetsAfter("", 2);
    List<ListingStore.DatasetRow> rest = store.listings().datasetsAfter(first.get(1).name(), 2);
    // verify
    assertEquals(List.of(new ListingStore.DatasetRow("alice", "alice"), new ListingStore.DatasetRow("alice.a", "alice")),
        first);
    assertEquals(List.of(new ListingStore.DatasetRow("alice.b", "alice")), rest);
    assertEquals(List.of("alice.a", "alice.b"), store.listings().datasetNames("alice.a", true, 10));
    assertEquals(List.of("alice.b"), store.listings().datasetNames("alice.a", false, 10));
    assertEquals(Map.of("alice.a", "alice"), store.listings().owners(List.of("alice.a", "missing")));
  }
}
