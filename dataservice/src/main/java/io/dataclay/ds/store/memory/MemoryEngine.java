package io.dataclay.ds.store.memory;

import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.Setting;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoreEngine;
import io.dataclay.ds.store.crypt.Encryption;
import java.util.List;

/** The {@code memory} engine in the registry: a DRAM hash map, nothing persisted ({@link MemoryStore}). */
public final class MemoryEngine implements StoreEngine {
  @Override
  public String name() {
    return MemoryStore.ENGINE;
  }

  @Override
  public String durability() {
    return "none: a stop or crash loses everything";
  }

  @Override
  public String description() {
    return "plain DRAM (the benchmark baseline)";
  }

  @Override
  public List<Setting> settings() {
    return List.of();
  }

  /** Keeps nothing at rest, so a configured key is neither read nor used. */
  @Override
  public ObjectStore open(StoreConfig config, Encryption atRest) {
    return MemoryStore.open(config);
  }

  /** Keeps nothing, so there is nothing to erase. */
  @Override
  public String erase(StoreConfig config) {
    return null;
  }
}
