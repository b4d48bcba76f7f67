package io.dataclay.ds.store;

import io.dataclay.ds.store.crypt.Encryption;
import io.dataclay.exceptions.InvalidArgumentException;

/** Opens and erases the store a configuration names, through the engine the registry ({@link StoreEngines}) has by that name. */
public final class ObjectStores {
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
    // Every engine is reached through the guard, so none checks arguments or races its own close;
    // with a key, values are sealed on their way to what the engine keeps at rest.
    StoreEngine engine = StoreEngines.named(config.engine());
    return new GuardedStore(engine.open(config, Encryption.forStore(config)));
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
    return StoreEngines.named(config.engine()).erase(config);
  }
}
