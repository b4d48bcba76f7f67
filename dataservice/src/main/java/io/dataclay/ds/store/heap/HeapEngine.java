package io.dataclay.ds.store.heap;

import io.dataclay.ds.store.StoreEngine;
import io.dataclay.ds.store.engine.PoolDirectory;
import java.util.List;

/** The {@code heap} engine in the registry: objects laid out field by field in a pmem pool ({@link HeapStore}). */
public final class HeapEngine {
  /** heap, as the registry lists it. */
  public static final StoreEngine ENGINE = new StoreEngine(HeapStore.ENGINE,
      "durable and crash-consistent when a call returns; a method that changes one field writes that field"
          + " in place, so an update costs what the field costs, not what the object costs",
      "objects laid out field by field in an llpl transactional heap: a field table per object, small values"
          + " inline, large ones in blocks of their own",
      List.of(), StoreEngine.sealedWhole(HeapStore::open),
      config -> PoolDirectory.erase(config.path(), HeapStore.ENGINE));

  private HeapEngine() {}
}
