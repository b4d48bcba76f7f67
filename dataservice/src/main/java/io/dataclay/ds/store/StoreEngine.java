package io.dataclay.ds.store;

import io.dataclay.ds.store.crypt.Encryption;
import io.dataclay.ds.store.crypt.StoreKey;
import java.util.List;
import java.util.function.BiFunction;

/**
 * A store engine as the registry ({@link StoreEngines}) knows it: its name in configuration, what
 * it promises about durability, the configuration keys only it reads, and how to open and erase
 * its store. Each engine package declares one; {@link ObjectStores} opens and erases stores through
 * them, so nothing but the registry names the engines, and decides the layers every store gets:
 * the argument and close guard over it, and encryption at rest where the engine places it.
 *
 * @param name the name {@code DATACLAY_STORE} and {@code dataclay start --store} use, e.g. "kv"
 * @param durability one sentence: what survives a crash (as {@code docs/engines.md} states it)
 * @param description one line: what the engine is
 * @param settings the configuration keys only this engine reads, in the order to show them; those
 *     every store reads (engine, pool directory and size, key file) are in the Data Service's own table
 * @param opener how the engine opens its store (see {@link #open})
 * @param eraser how the engine erases what it keeps (see {@link #erase})
 */
public record StoreEngine(
    String name, String durability, String description, List<Setting> settings, Opener opener, Eraser eraser) {
  /** Opens an engine's store; see {@link StoreEngine#open}. */
  @FunctionalInterface
  public interface Opener {
    /** The engine's store for {@code config}, sealed by {@code atRest} where the engine keeps data at rest. */
    ObjectStore open(StoreConfig config, Encryption atRest);
  }

  /** Erases what an engine keeps; see {@link StoreEngine#erase}. */
  @FunctionalInterface
  public interface Eraser {
    /** What was erased for {@code config}, or null when there was nothing. */
    String erase(StoreConfig config);
  }

  /** Keeps its own copy of {@code settings}. */
  public StoreEngine {
    settings = List.copyOf(settings);
  }

  /**
   * The opener of an engine that keeps its whole store at rest: {@code open} admits the key, and
   * the store it answers is sealed whole.
   */
  public static Opener sealedWhole(BiFunction<StoreConfig, StoreKey, ObjectStore> open) {
    return (config, atRest) -> atRest.seal(open.apply(config, atRest.key()));
  }

  /**
   * Opens (creating when missing) the engine's store for {@code config}: admits
   * {@code atRest.key()} (or its absence) against what the store recorded when it was made, and
   * puts {@code atRest.seal(...)} over the part of the store that keeps data at rest (the whole
   * store, or the level under a cache). An engine that keeps nothing at rest ignores both.
   *
   * @throws io.dataclay.exceptions.InvalidArgumentException when the store cannot be opened
   */
  public ObjectStore open(StoreConfig config, Encryption atRest) {
    return opener.open(config, atRest);
  }

  /**
   * Erases what the engine keeps for {@code config} (needs no key; refused while the store is
   * open anywhere); returns what was erased, or null when there was nothing.
   *
   * @throws io.dataclay.exceptions.InvalidArgumentException naming what was not erased and why
   */
  public String erase(StoreConfig config) {
    return eraser.erase(config);
  }
}
