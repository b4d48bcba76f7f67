package io.dataclay.ds.store;

import io.dataclay.ds.store.crypt.Encryption;
import java.util.List;

/**
 * A store engine as the registry ({@link StoreEngines}) knows it: its name in configuration, what
 * it promises about durability, the configuration keys only it reads, and how to open and erase
 * its store. Each engine package holds one; {@link ObjectStores} opens and erases stores through
 * them, so nothing but the registry names the engines, and decides the layers every store gets:
 * the argument and close guard over it, and encryption at rest where the engine places it.
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
   * Opens (creating when missing) the engine's store for {@code config}: admits
   * {@code atRest.key()} (or its absence) against what the store recorded when it was made, and
   * puts {@code atRest.seal(...)} over the part of the store that keeps data at rest (the whole
   * store, or the level under a cache). An engine that keeps nothing at rest ignores both.
   *
   * @throws io.dataclay.exceptions.InvalidArgumentException when the store cannot be opened
   */
  ObjectStore open(StoreConfig config, Encryption atRest);

  /**
   * Erases what the engine keeps for {@code config} (needs no key; refused while the store is
   * open anywhere); returns what was erased, or null when there was nothing.
   *
   * @throws io.dataclay.exceptions.InvalidArgumentException naming what was not erased and why
   */
  String erase(StoreConfig config);
}
