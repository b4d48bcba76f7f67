package io.dataclay.ds.service;

import io.dataclay.common.Language;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The models deployed on this backend: which classes are registered per language (checked on
 * every make persistent) and the version installed per namespace. Reads are lock-free.
 */
public final class ModelRegistry {
  private record Installed(Language language, long version, Set<String> classNames) {}

  private final Map<String, Installed> byNamespace = new HashMap<>();
  private volatile Map<Language, Set<String>> classes = Map.of();

  /** Whether {@code className} belongs to a deployed model of {@code language}. */
  public boolean isRegistered(Language language, String className) {
    Set<String> names = classes.get(language);
    return names != null && names.contains(className);
  }

  /**
   * Whether a bundle is newer than what is installed for its namespace (a bundle of the same
   * version is taken again, so a re-deploy repairs files).
   */
  public synchronized boolean isCurrentOrNewer(ModelBundle bundle) {
    Installed now = byNamespace.get(bundle.namespace());
    return now == null || bundle.version() >= now.version();
  }

  /** Records an installed bundle: its classes replace the namespace's previous ones. */
  public synchronized void record(ModelBundle bundle) {
    byNamespace.put(bundle.namespace(),
        new Installed(bundle.language(), bundle.version(), Set.copyOf(bundle.classNames())));
    Map<Language, Set<String>> next = new EnumMap<>(Language.class);
    for (Installed i : byNamespace.values()) {
      next.computeIfAbsent(i.language(), l -> new HashSet<>()).addAll(i.classNames());
    }
    next.replaceAll((l, names) -> Set.copyOf(names));
    classes = Map.copyOf(next);
  }
}
