package io.dataclay.ds.store.kv;

import io.dataclay.ds.store.StoreEngine;
import io.dataclay.ds.store.engine.PoolDirectory;
import java.util.List;

/** The {@code kv} engine in the registry: one encoded record per object in a pmem pool ({@link KvStore}). */
public final class KvEngine {
  /** kv, as the registry lists it. */
  public static final StoreEngine ENGINE = new StoreEngine(KvStore.ENGINE,
      "durable and crash-consistent when a call returns: each write is one PMDK transaction",
      "serialised objects in a persistent key-value store on a pmem pool (llpl / PMDK), pmemkv-shaped",
      List.of(), StoreEngine.sealedWhole(KvStore::open), config -> PoolDirectory.erase(config.path(), KvStore.ENGINE));

  private KvEngine() {}
}
