package io.dataclay.ds.store;

import io.dataclay.ds.store.engine.PoolDirectory;
import io.dataclay.ds.store.heap.HeapStore;
import io.dataclay.ds.store.kv.KvStore;
import io.dataclay.ds.store.memory.MemoryStore;
import io.dataclay.ds.store.postgres.PostgresStore;
import io.dataclay.ds.store.twolevel.TwoLevelStore;
import io.dataclay.exceptions.InvalidArgumentException;
import java.util.List;

/** Opens the store engine a configuration names; the only place that knows the engines. */
public final class ObjectStores {
  /** Names of the engines this build has, in the order `dataclay` lists them. */
  public static final List<String> ENGINES =
      List.of(KvStore.ENGINE, HeapStore.ENGINE, TwoLevelStore.ENGINE, PostgresStore.ENGINE, MemoryStore.ENGINE);

  private ObjectStores() {}

  /**
   * Opens (creating when missing) the store the configuration names.
   *
   * @throws InvalidArgumentException for an unknown engine name (the message lists the valid
   *     ones), a pool directory that cannot be used, or (postgres) a database that cannot be reached
   */
  public static ObjectStore open(StoreConfig config) {
    if (config == null) {
      throw new InvalidArgumentException("store configuration is missing");
    }
    return switch (config.engine()) {
      case KvStore.ENGINE -> KvStore.open(config);
      case HeapStore.ENGINE -> HeapStore.open(config);
      case TwoLevelStore.ENGINE -> TwoLevelStore.open(config);
      case PostgresStore.ENGINE -> PostgresStore.open(config);
      case MemoryStore.ENGINE -> MemoryStore.open(config);
      default -> throw unknown(config);
    };
  }

  /**
   * Erases what the store {@code config} names keeps: a pmem pool directory is overwritten with
   * zeros and removed, a postgres backend's rows are deleted (and its pool directory, if any,
   * erased). Needs no key, and refuses a store that is open anywhere. Returns what was erased, or
   * null when there was nothing.
   *
   * @throws InvalidArgumentException naming what was not erased and why
   */
  public static String erase(StoreConfig config) {
    if (config == null) {
      throw new InvalidArgumentException("store configuration is missing");
    }
    return switch (config.engine()) {
      case KvStore.ENGINE, HeapStore.ENGINE, TwoLevelStore.ENGINE -> PoolDirectory.erase(config.path(), config.engine());
      case PostgresStore.ENGINE -> PostgresStore.erase(config);
      case MemoryStore.ENGINE -> null; // keeps nothing
      default -> throw unknown(config);
    };
  }

  private static InvalidArgumentException unknown(StoreConfig config) {
    return new InvalidArgumentException(
        "unknown store engine '" + config.engine() + "'; valid engines: " + String.join(", ", ENGINES));
  }
}
