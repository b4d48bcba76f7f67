package io.dataclay.ds.store.twolevel;

import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.Setting;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoreEngine;
import io.dataclay.ds.store.crypt.Encryption;
import io.dataclay.ds.store.engine.PoolDirectory;
import java.util.List;

/** The {@code 2lm} engine in the registry: a DRAM cache in front of a kv pool in NVRAM ({@link TwoLevelStore}). */
public final class TwoLevelEngine implements StoreEngine {
  @Override
  public String name() {
    return TwoLevelStore.ENGINE;
  }

  @Override
  public String durability() {
    return "weaker: everything acknowledged before the last completed checkpoint survives a crash, later writes"
        + " may be lost; every object comes back whole";
  }

  @Override
  public String description() {
    return "two-level memory: a DRAM cache of objects in front of a kv pool in NVRAM, written back on eviction,"
        + " at every checkpoint and on a clean stop";
  }

  @Override
  public List<Setting> settings() {
    return List.of(StoreConfig.CACHE_SIZE, StoreConfig.CHECKPOINT_MS);
  }

  @Override
  public ObjectStore open(StoreConfig config, Encryption atRest) {
    return TwoLevelStore.open(config, atRest); // seals what is written back, not its DRAM cache
  }

  @Override
  public String erase(StoreConfig config) {
    return PoolDirectory.erase(config.path(), TwoLevelStore.ENGINE);
  }
}
