package io.dataclay.ds.store;

import java.util.List;

/**
 * A store engine as the registry ({@link StoreEngines}) knows it: its name in configuration, what
 * it promises about durability, the configuration keys only it reads, and how to open and erase
 * its store. Each engine package holds one; {@link ObjectStores} opens and erases stores through
 * them, so nothing but the registry names the engines.
 */
public interface StoreEngine {
  /** The name {@code DATACLAY_STORE} and {@code dataclay start --store} use, e.g. "kv". */
  String name();

  /** One sentence: what survives a crash (as {@code docs/engines.md} states it). */
  String durability();

  /** One line: what the engine is. */
  String description();

  /**
   * The configuration keys only this engine reads, in the order to show them; those every store
   * reads (engine, pool directory and size, key file) are in the Data Service's own table.
   */
  List<Setting> settings();

  /**
   * Opens (creating when missing) the engine's store for {@code config}.
   *
   * @throws io.dataclay.exceptions.InvalidArgumentException when the store cannot be opened
   */
  ObjectStore open(StoreConfig config);

  /**
   * Erases what the engine keeps for {@code config} (needs no key; refused while the store is
   * open anywhere); returns what was erased, or null when there was nothing.
   *
   * @throws io.dataclay.exceptions.InvalidArgumentException naming what was not erased and why
   */
  String erase(StoreConfig config);
}
