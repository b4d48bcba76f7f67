package io.dataclay.ds.models;

import io.dataclay.common.Language;
import io.dataclay.ds.session.Session;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The models this backend knows: per namespace the last state the Logic Module sent (installed,
 * or withdrawn), with its owner and publication, and per class the model it belongs to. This is
 * the one place that says who may use a class ({@link #usableBy}). Reads are lock-free; changes are
 * ordered by the Logic Module's revision, so a late message never undoes a newer change.
 */
public final class ModelRegistry {
  /** A namespace's last state, without file contents; {@code paths}: the Python files it holds here. */
  private record Known(ModelBundle model, Set<String> paths) {}

  private final Map<String, Known> byNamespace = new HashMap<>();
  private final Map<String, Long> removedAt = new HashMap<>();
  private volatile Map<Language, Map<String, ModelBundle>> byClass = Map.of();
  private long synced;

  /**
   * The model {@code className} belongs to, installed or withdrawn (its files left out), or empty
   * when no model this backend knows defines it.
   */
  public Optional<ModelBundle> modelOf(Language language, String className) {
    Map<String, ModelBundle> classes = byClass.get(language);
    return Optional.ofNullable(classes == null ? null : classes.get(className));
  }

  /** The namespace of the model that defines {@code className}, if this backend knows it. */
  public Optional<String> namespaceOf(Language language, String className) {
    return modelOf(language, className).map(ModelBundle::namespace);
  }

  /**
   * Whether {@code session} may use {@code className} now: it belongs to an installed model that
   * is not withdrawn and that the session's account may use (see {@link ModelBundle#usableBy}).
   * False for a class this backend does not know (yet).
   */
  public boolean usableBy(Session session, Language language, String className) {
    return modelOf(language, className).filter(m -> m.usableBy(session)).isPresent();
  }

  /**
   * Whether {@code bundle} is news: no newer change of its namespace (revision) was applied here,
   * and its code is not older than what is installed (a bundle of the same version is taken again,
   * so a re-deploy repairs files).
   */
  public synchronized boolean accepts(ModelBundle bundle) {
    Known now = byNamespace.get(bundle.namespace());
    Long removed = removedAt.get(bundle.namespace());
    if (bundle.revision() > 0 && ((removed != null && removed > bundle.revision())
        || (now != null && now.model().revision() > bundle.revision()))) {
      return false;
    }
    return now == null || now.model().withdrawn() || bundle.withdrawn() || bundle.version() >= now.model().version();
  }

  /**
   * Records a namespace's new state: its classes replace the previous ones. Returns the paths of
   * Python files the namespace held here that it no longer holds and no other namespace holds (to
   * delete).
   */
  public synchronized List<String> record(ModelBundle bundle) {
    Set<String> paths = new HashSet<>();
    if (bundle.language() == Language.PYTHON) {
      bundle.files().forEach(f -> paths.add(f.path()));
    }
    ModelBundle stripped = new ModelBundle(bundle.namespace(), bundle.language(), bundle.version(), List.of(),
        bundle.classNames(), bundle.owner(), bundle.published(), bundle.withdrawn(), bundle.revision());
    Known before = byNamespace.put(bundle.namespace(), new Known(stripped, Set.copyOf(paths)));
    removedAt.remove(bundle.namespace());
    reindex();
    return before == null ? List.of() : unclaimed(before.paths());
  }

  /**
   * Forgets a namespace the Logic Module removed at {@code revision} (0: whatever its state), unless
   * it changed later here. Returns the paths of its Python files no other namespace holds (to
   * delete), or empty when the removal is older than what is installed.
   */
  public synchronized Optional<List<String>> forget(String namespace, long revision) {
    Known now = byNamespace.get(namespace);
    if (revision > 0 && now != null && now.model().revision() > revision) {
      return Optional.empty();
    }
    removedAt.merge(namespace, revision, Math::max);
    if (now == null) {
      return Optional.of(List.of());
    }
    byNamespace.remove(namespace);
    reindex();
    return Optional.of(unclaimed(now.paths()));
  }

  /** Whether this backend holds a state (installed or withdrawn) of {@code namespace}. */
  public synchronized boolean knows(String namespace) {
    return byNamespace.containsKey(namespace);
  }

  /** Whether {@code namespace}'s code is installed here (known and not withdrawn): an environment may have loaded it. */
  public synchronized boolean loaded(String namespace) {
    Known k = byNamespace.get(namespace);
    return k != null && !k.model().withdrawn();
  }

  /**
   * The namespaces known here that are not in {@code listed} and whose last change is not newer
   * than {@code revision}: the Logic Module's list as of {@code revision} says they were removed.
   */
  public synchronized List<String> missingFrom(Set<String> listed, long revision) {
    List<String> out = new ArrayList<>();
    byNamespace.forEach((ns, k) -> {
      if (!listed.contains(ns) && k.model().revision() <= revision) {
        out.add(ns);
      }
    });
    return out;
  }

  /** Every Python file path the installed models hold here. */
  public synchronized Set<String> pythonPaths() {
    Set<String> out = new HashSet<>();
    byNamespace.values().forEach(k -> out.addAll(k.paths()));
    return out;
  }

  /**
   * The last model change up to which every change is applied here: a whole list ({@code full})
   * brings it to that list's revision, a single change advances it only when it is the next one.
   */
  public synchronized void synced(long revision, boolean full) {
    if (full ? revision > synced : revision == synced + 1) {
      synced = revision;
    }
  }

  /** See {@link #synced(long, boolean)}. */
  public synchronized long synced() {
    return synced;
  }

  private List<String> unclaimed(Set<String> paths) {
    Set<String> held = new HashSet<>();
    byNamespace.values().forEach(k -> held.addAll(k.paths()));
    return paths.stream().filter(p -> !held.contains(p)).sorted().toList();
  }

  private void reindex() {
    Map<Language, Map<String, ModelBundle>> next = new EnumMap<>(Language.class);
    for (Known k : byNamespace.values()) {
      Map<String, ModelBundle> classes = next.computeIfAbsent(k.model().language(), l -> new HashMap<>());
      k.model().classNames().forEach(c -> classes.put(c, k.model()));
    }
    next.replaceAll((l, classes) -> Map.copyOf(classes));
    byClass = Map.copyOf(next);
  }
}
