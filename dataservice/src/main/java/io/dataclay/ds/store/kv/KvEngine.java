package io.dataclay.ds.store.kv;

import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.Setting;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoreEngine;
import io.dataclay.ds.store.crypt.Encryption;
import io.dataclay.ds.store.engine.PoolDirectory;
import java.util.List;

/** The {@code kv} engine in the registry: one encoded record per object in a pmem pool ({@link KvStore}). */
public final class KvEngine implements StoreEngine {
  @Override
  public String name() {
    return KvStore.ENGINE;
  }

  @Override
  public String durability() {
    return "durable and crash-consistent when a call returns: each write is one PMDK transaction";
  }

  @Override
  public String description() {
    return "serialised objects in a persistent key-value store on a pmem pool (llpl / PMDK), pmemkv-shaped";
  }

  @Override
  public List<Setting> settings() {
    return List.of();
  }

  @Override
  public ObjectStore open(StoreConfig config, Encryption atRest) {
    return atRest.seal(KvStore.open(config, atRest.key()));
  }

  @Override
  public String erase(StoreConfig config) {
    return PoolDirectory.erase(config.path(), KvStore.ENGINE);
  }
}
