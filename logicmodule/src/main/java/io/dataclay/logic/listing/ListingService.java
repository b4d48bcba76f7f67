package io.dataclay.logic.listing;

import io.dataclay.exceptions.DatasetDoesNotExistException;
import io.dataclay.exceptions.ObjectDoesNotExistException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.logic.accounts.CallerSession;
import io.dataclay.logic.checks.Checks;
import io.dataclay.logic.metadata.ContractRecord;
import io.dataclay.logic.metadata.ListingStore;
import io.dataclay.logic.metadata.MetadataStore;
import io.dataclay.logic.metadata.ObjectRecord;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Listing datasets, aliases and objects, a page at a time (ListDatasets, ListAliases,
 * ListObjects). A user sees the datasets its session may read now (owned, or by a data contract in
 * force), and only what they hold; an administrator sees every dataset. Each page is read from
 * those datasets as they are at that call: a page token only says where the last page ended.
 */
public final class ListingService {
  /** Entries of a page when the request names no size. */
  public static final int DEFAULT_PAGE_SIZE = 100;
  /** The most entries of a page; a larger size asked for is this. */
  public static final int MAX_PAGE_SIZE = 1000;
  /** The most datasets one page looks into: a page may end early (even empty) with a token to go on. */
  static final int MAX_DATASETS_PER_PAGE = 256;
  private static final int MAX_PATTERN = 512;
  private static final int DATASET_CHUNK = 64;

  private final MetadataStore store;

  /** Listings read from {@code store}. */
  public ListingService(MetadataStore store) {
    this.store = store;
  }

  /** The datasets the caller may see, by name; with their object counts when {@code countObjects}. */
  public Listing.Page<Listing.Dataset> datasets(CallerSession caller, int pageSize, String pageToken, boolean countObjects) {
    requireUser(caller);
    int size = pageSize(pageSize);
    List<String> listing = List.of("datasets", caller.username(), String.valueOf(caller.admin()));
    List<String> at = PageToken.decode(pageToken, listing, 1);
    String after = at.isEmpty() ? "" : datasetKey(at.get(0));
    List<ListingStore.DatasetRow> rows;
    if (caller.admin()) {
      rows = store.listings().datasetsAfter(after, size + 1);
    } else {
      List<String> names = new ArrayList<>();
      for (String name : new TreeSet<>(caller.datasets()).tailSet(after, false)) {
        if (names.size() > size) {
          break;
        }
        names.add(name);
      }
      rows = new ArrayList<>(names.size());
      for (Map.Entry<String, String> e : store.listings().owners(names).entrySet()) {
        rows.add(new ListingStore.DatasetRow(e.getKey(), e.getValue()));
      }
    }
    boolean more = rows.size() > size;
    rows = more ? rows.subList(0, size) : rows;
    Map<String, Long> counts = countObjects ? store.listings().objectCounts(rows.stream()
        .map(ListingStore.DatasetRow::name).toList()) : Map.of();
    Map<String, Long> contractEnds = new HashMap<>();
    for (ContractRecord c : store.accounts().contractsTo(caller.username())) {
      contractEnds.put(c.dataset(), c.expiresAtMs());
    }
    List<Listing.Dataset> out = new ArrayList<>(rows.size());
    for (ListingStore.DatasetRow r : rows) {
      Listing.Access access = access(caller, r);
      long ends = access == Listing.Access.READ_ONLY || access == Listing.Access.READ_WRITE
          ? contractEnds.getOrDefault(r.name(), 0L) : 0;
      out.add(new Listing.Dataset(r.name(), r.owner(), access, ends, counts.getOrDefault(r.name(), -1L)));
    }
    String next = more ? PageToken.encode(listing, List.of(rows.get(rows.size() - 1).name())) : "";
    return new Listing.Page<>(out, next);
  }

  private static Listing.Access access(CallerSession caller, ListingStore.DatasetRow r) {
    if (r.owner().equals(caller.username())) {
      return Listing.Access.OWNER;
    }
    if (!caller.mayUse(r.name())) {
      return Listing.Access.NONE;
    }
    return caller.readOnlyDatasets().contains(r.name()) ? Listing.Access.READ_ONLY : Listing.Access.READ_WRITE;
  }

  /**
   * The aliases matching {@code pattern} ('*': any run of characters, '?': one; empty: all) in
   * {@code dataset} (empty: every dataset the caller may see), by dataset then alias.
   */
  public Listing.Page<ListingStore.AliasRow> aliases(CallerSession caller, String pattern, String dataset, int pageSize,
      String pageToken) {
    requireUser(caller);
    int size = pageSize(pageSize);
    String glob = glob(pattern);
    String only = only(caller, dataset);
    List<String> listing = List.of("aliases", caller.username(), String.valueOf(caller.admin()),
        glob == null ? "*" : glob, only);
    List<String> at = PageToken.decode(pageToken, listing, 2);
    String fromDataset = at.isEmpty() ? "" : datasetKey(at.get(0));
    String afterAlias = at.isEmpty() || at.get(1).isEmpty() ? "" : Checks.alias("page_token", at.get(1));
    return walk(caller, only, fromDataset, size, (ds, remaining) -> {
      String after = ds.equals(fromDataset) ? afterAlias : "";
      return store.listings().aliases(ds, glob, after, remaining);
    }, a -> List.of(a.dataset(), a.alias()), listing);
  }

  /**
   * The objects of class {@code className} (empty: of every class) in {@code dataset} (empty: every
   * dataset the caller may see), by dataset, class and ID, with their aliases and replicas. When
   * {@code versionOf} is not empty, only the versions of that object, which the caller must be
   * able to read: an object it may not read gets the answer GetObjectInfo gives, that of an unknown ID.
   */
  public Listing.Page<ObjectRecord> objects(CallerSession caller, String className, String dataset, String versionOf,
      int pageSize, String pageToken) {
    requireUser(caller);
    int size = pageSize(pageSize);
    String cls = className == null || className.isEmpty() ? null : Checks.className("class_name", className);
    String only = only(caller, dataset);
    String original = versionOf == null || versionOf.isEmpty() ? "" : readable(caller, versionOf);
    List<String> listing = new ArrayList<>(List.of("objects", caller.username(), String.valueOf(caller.admin()),
        cls == null ? "" : cls, only));
    if (!original.isEmpty()) {
      listing.add(original); // only when given: the tokens of every other listing stay as they were
    }
    List<String> at = PageToken.decode(pageToken, listing, 3);
    String fromDataset = at.isEmpty() ? "" : datasetKey(at.get(0));
    String afterClass = at.isEmpty() || at.get(1).isEmpty() ? "" : Checks.className("page_token", at.get(1));
    String afterId = at.isEmpty() || at.get(2).isEmpty() ? "" : Checks.uuid("page_token", at.get(2));
    if (!original.isEmpty()) {
      return versions(caller, original, cls, only, size, List.of(fromDataset, afterClass, afterId), listing);
    }
    return walk(caller, only, fromDataset, size, (ds, remaining) -> {
      boolean resume = ds.equals(fromDataset);
      return store.listings().objects(ds, cls, resume ? afterClass : "", resume ? afterId : "", remaining);
    }, o -> List.of(o.dataset(), o.className(), o.id()), listing);
  }

  /**
   * The ID of an object the caller may read: the same rule, and the same answer for one it may not
   * read as for an unknown one, as GetObjectInfo's.
   */
  private String readable(CallerSession caller, String id) {
    Checks.uuid("version_of", id);
    return store.objects().find(id).filter(o -> caller.mayUse(o.dataset())).map(ObjectRecord::id)
        .orElseThrow(() -> new ObjectDoesNotExistException("object " + id + " does not exist"));
  }

  /**
   * A page of the versions of {@code original} after {@code after} (dataset, class, ID), in the
   * order of every object listing, from the datasets the caller may see ({@code only}, when given),
   * of class {@code cls} unless it is null. Read by their link to the original, across datasets,
   * skipping those the caller may not see: one more than the page holds is found, so a full page
   * knows whether anything follows.
   */
  private Listing.Page<ObjectRecord> versions(CallerSession caller, String original, String cls, String only, int size,
      List<String> after, List<String> listing) {
    List<ObjectRecord> out = new ArrayList<>();
    List<String> from = after;
    while (true) {
      List<ObjectRecord> rows = store.listings().versions(original, from.get(0), from.get(1), from.get(2), size + 1);
      for (ObjectRecord o : rows) {
        boolean shown = (only.isEmpty() ? caller.admin() || caller.mayUse(o.dataset()) : only.equals(o.dataset()))
            && (cls == null || cls.equals(o.className()));
        if (!shown) {
          continue;
        }
        out.add(o);
        if (out.size() > size) {
          List<ObjectRecord> page = out.subList(0, size);
          ObjectRecord last = page.get(size - 1);
          return new Listing.Page<>(page, PageToken.encode(listing, List.of(last.dataset(), last.className(),
              last.id())));
        }
      }
      if (rows.size() <= size) {
        return new Listing.Page<>(out, "");
      }
      ObjectRecord last = rows.get(rows.size() - 1);
      from = List.of(last.dataset(), last.className(), last.id());
    }
  }

  /** Reads up to {@code limit} entries of one dataset, after the listing's position in it. */
  private interface DatasetReader<T> {
    List<T> read(String dataset, int limit);
  }

  /**
   * Fills a page from the datasets the caller may see, in order, from {@code fromDataset} on: one
   * more entry than the page holds is read, so a full page knows whether anything follows.
   */
  private <T> Listing.Page<T> walk(CallerSession caller, String only, String fromDataset, int size, DatasetReader<T> reader,
      Function<T, List<String>> key, List<String> listing) {
    List<T> out = new ArrayList<>();
    int looked = 0;
    Iterator<String> datasets = visible(caller, only, fromDataset);
    while (datasets.hasNext()) {
      String ds = datasets.next();
      if (looked == MAX_DATASETS_PER_PAGE) {
        // every dataset before this one is done: go on from its start
        return new Listing.Page<>(out, PageToken.encode(listing, startOf(ds, listing.get(0))));
      }
      looked++;
      out.addAll(reader.read(ds, size + 1 - out.size()));
      if (out.size() > size) {
        List<T> page = out.subList(0, size);
        return new Listing.Page<>(page, PageToken.encode(listing, key.apply(page.get(size - 1))));
      }
    }
    return new Listing.Page<>(out, "");
  }

  private static List<String> startOf(String dataset, String kind) {
    return kind.equals("objects") ? List.of(dataset, "", "") : List.of(dataset, "");
  }

  /**
   * The datasets a listing looks into, in order, from {@code from} on (itself included): {@code
   * only} when it is given, else those the caller may see now (an administrator: every one).
   */
  private Iterator<String> visible(CallerSession caller, String only, String from) {
    if (!only.isEmpty()) {
      // a token of this listing names this dataset (the listing's digest covers it)
      return (from.isEmpty() || from.equals(only) ? List.of(only) : List.<String>of()).iterator();
    }
    if (!caller.admin()) {
      return new TreeSet<>(caller.datasets()).tailSet(from, true).iterator();
    }
    return new Iterator<>() {
      private Iterator<String> chunk = Collections.emptyIterator();
      private String last;
      private boolean exhausted;

      @Override
      public boolean hasNext() {
        if (!chunk.hasNext() && !exhausted) {
          List<String> names = last == null ? store.listings().datasetNames(from, true, DATASET_CHUNK)
              : store.listings().datasetNames(last, false, DATASET_CHUNK);
          exhausted = names.size() < DATASET_CHUNK;
          if (!names.isEmpty()) {
            last = names.get(names.size() - 1);
          }
          chunk = names.iterator();
        }
        return chunk.hasNext();
      }

      @Override
      public String next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return chunk.next();
      }
    };
  }

  /**
   * The one dataset a listing is asked for ("" when none): one the caller may see (an
   * administrator: any that exists). A user is told the same for a dataset that does not exist and
   * one it may not see, so a name tells nothing about others' datasets.
   */
  private String only(CallerSession caller, String dataset) {
    if (dataset == null || dataset.isEmpty()) {
      return "";
    }
    Checks.name("dataset", dataset);
    if (caller.mayUse(dataset)) {
      return dataset;
    }
    if (caller.admin()) {
      if (store.accounts().datasetOwner(dataset).isEmpty()) {
        throw new DatasetDoesNotExistException("dataset: '" + dataset + "' does not exist");
      }
      return dataset;
    }
    throw new PermissionDeniedException("dataset: '" + caller.username() + "' may not see dataset '" + dataset
        + "': it is neither theirs nor granted to them by a data contract in force (GetDatasets lists those"
        + " they may see)");
  }

  private static void requireUser(CallerSession caller) {
    if (caller.backend()) {
      throw new PermissionDeniedException("listing datasets, aliases and objects is for user sessions; a backend"
          + " has no datasets to list");
    }
  }

  private static int pageSize(int requested) {
    if (requested < 0) {
      throw Checks.invalid("page_size", "must be 0 (the default, " + DEFAULT_PAGE_SIZE + ") or a positive number"
          + " (at most " + MAX_PAGE_SIZE + " are sent a page); got " + requested);
    }
    return requested == 0 ? DEFAULT_PAGE_SIZE : Math.min(requested, MAX_PAGE_SIZE);
  }

  /** A glob pattern as asked for; null for one that matches everything. */
  private static String glob(String pattern) {
    if (pattern == null || pattern.isEmpty() || pattern.chars().allMatch(ch -> ch == '*')) {
      return null;
    }
    if (pattern.length() > MAX_PATTERN || pattern.chars().anyMatch(Character::isISOControl)) {
      throw Checks.invalid("pattern", "must be at most " + MAX_PATTERN + " characters without control characters"
          + " ('*' stands for any run of characters, '?' for one, every other character for itself)");
    }
    return pattern;
  }

  private static String datasetKey(String fromToken) {
    return fromToken.isEmpty() ? "" : Checks.name("page_token", fromToken);
  }
}
