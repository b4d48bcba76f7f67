package io.dataclay.ds.store.heap;

import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.Setting;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoreEngine;
import io.dataclay.ds.store.crypt.Encryption;
import io.dataclay.ds.store.engine.PoolDirectory;
import java.util.List;

/** The {@code heap} engine in the registry: objects laid out field by field in a pmem pool ({@link HeapStore}). */
public final class HeapEngine implements StoreEngine {
  @Override
  public String name() {
    return HeapStore.ENGINE;
  }

  @Override
  public String durability() {
    return "durable and crash-consistent when a call returns; a method that changes one field writes that field"
        + " in place, so an update costs what the field costs, not what the object costs";
  }

  @Override
  public String description() {
    return "objects laid out field by field in an llpl transactional heap: a field table per object, small values"
        + " inline, large ones in blocks of their own";
  }

  @Override
  public List<Setting> settings() {
    return List.of();
  }

  @Override
  public ObjectStore open(StoreConfig config, Encryption atRest) {
    return atRest.seal(HeapStore.open(config, atRest.key()));
  }

  @Override
  public String erase(StoreConfig config) {
    return PoolDirectory.erase(config.path(), HeapStore.ENGINE);
  }
}
