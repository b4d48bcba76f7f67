package io.dataclay.ds.environments;

import io.dataclay.common.Language;
import io.dataclay.exceptions.BackendUnavailableException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/** The execution environments of this backend, by language. Lookups are lock-free. */
public final class Environments {
  private volatile Map<Language, ExecutionEnvironment> byLanguage = new EnumMap<>(Language.class);

  /** Adds the environment of its language (one per language). */
  public synchronized void add(ExecutionEnvironment environment) {
    if (byLanguage.containsKey(environment.language())) {
      throw new IllegalStateException("a " + environment.language() + " environment is already installed");
    }
    Map<Language, ExecutionEnvironment> next = new EnumMap<>(Language.class);
    next.putAll(byLanguage);
    next.put(environment.language(), environment);
    byLanguage = next;
  }

  /**
   * The environment running objects of {@code language}.
   *
   * @throws BackendUnavailableException when this backend runs none
   */
  public ExecutionEnvironment of(Language language) {
    ExecutionEnvironment env = byLanguage.get(language);
    if (env == null) {
      throw new BackendUnavailableException(
          "this backend runs no " + language + " execution environment, so it cannot run methods of "
              + language + " objects");
    }
    return env;
  }

  /**
   * Drops objects from every environment's memory, so that each reloads their stored state; returns
   * once a call sent afterwards is sure to see it (see {@link ExecutionEnvironment#evict}).
   */
  public void evict(Collection<UUID> ids) {
    if (!ids.isEmpty()) {
      CompletableFuture.allOf(byLanguage.values().stream().map(env -> env.evict(ids))
          .toArray(CompletableFuture[]::new)).join();
    }
  }

  /** Tells {@code account}'s processes to drop the objects no call is using; returns how many were told. */
  public int unloadIdle(String account) {
    return byLanguage.values().stream().mapToInt(env -> env.unloadIdle(account)).sum();
  }

  /**
   * Objects {@code writer}'s call changed in the store: every other process holding them drops
   * them (see {@link ExecutionEnvironment#changed}).
   */
  public CompletableFuture<Void> changed(ExecutionEnvironment writer, Collection<UUID> ids) {
    if (ids.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    return CompletableFuture.allOf(byLanguage.values().stream().map(env -> env.changed(writer, ids))
        .toArray(CompletableFuture[]::new));
  }

  /** Stops running these models' code in every environment (see {@link ExecutionEnvironment#withdraw}). */
  public void withdraw(Collection<String> namespaces) {
    if (!namespaces.isEmpty()) {
      byLanguage.values().forEach(env -> env.withdraw(namespaces));
    }
  }

  /** The environment of {@code language}, or null. */
  public ExecutionEnvironment find(Language language) {
    return byLanguage.get(language);
  }

  /** The languages this backend runs. */
  public List<Language> languages() {
    return new ArrayList<>(byLanguage.keySet());
  }

  /** Every environment's status. */
  public List<EnvironmentStatus> statuses() {
    List<EnvironmentStatus> out = new ArrayList<>();
    for (ExecutionEnvironment e : byLanguage.values()) {
      out.add(e.status());
    }
    return out;
  }

  /** Stops every environment. */
  public void closeAll() {
    for (ExecutionEnvironment e : byLanguage.values()) {
      e.close();
    }
  }
}
