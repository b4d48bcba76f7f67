package io.dataclay.ds.store.memory;

import io.dataclay.ds.store.StoreEngine;
import java.util.List;

/** The {@code memory} engine in the registry: a DRAM hash map, nothing persisted ({@link MemoryStore}). */
public final class MemoryEngine {
  /**
   * memory, as the registry lists it. It keeps nothing at rest, so a configured key is neither read
   * nor used, and there is nothing to erase.
   */
  public static final StoreEngine ENGINE = new StoreEngine(MemoryStore.ENGINE,
      "none: a stop or crash loses everything",
      "plain DRAM (the benchmark baseline)",
      List.of(), (config, atRest) -> MemoryStore.open(config), config -> null);

  private MemoryEngine() {}
}
