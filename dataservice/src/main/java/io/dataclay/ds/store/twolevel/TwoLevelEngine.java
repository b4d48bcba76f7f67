package io.dataclay.ds.store.twolevel;

import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoreEngine;
import io.dataclay.ds.store.engine.PoolDirectory;
import java.util.List;

/** The {@code 2lm} engine in the registry: a DRAM cache in front of a kv pool in NVRAM ({@link TwoLevelStore}). */
public final class TwoLevelEngine {
  /** 2lm, as the registry lists it; it seals what is written back, not its DRAM cache. */
  public static final StoreEngine ENGINE = new StoreEngine(TwoLevelStore.ENGINE,
      "weaker: everything acknowledged before the last completed checkpoint survives a crash, later writes"
          + " may be lost; every object comes back whole",
      "two-level memory: a DRAM cache of objects in front of a kv pool in NVRAM, written back on eviction,"
          + " at every checkpoint and on a clean stop",
      List.of(StoreConfig.CACHE_SIZE, StoreConfig.CHECKPOINT_MS), TwoLevelStore::open,
      config -> PoolDirectory.erase(config.path(), TwoLevelStore.ENGINE));

  private TwoLevelEngine() {}
}
