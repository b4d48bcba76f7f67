package io.dataclay.ds.store.postgres;

import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoreEngine;
import java.util.List;

/** The {@code postgres} engine in the registry: one row per object in a PostgreSQL database ({@link PostgresStore}). */
public final class PostgresEngine {
  /** postgres, as the registry lists it. */
  public static final StoreEngine ENGINE = new StoreEngine(PostgresStore.ENGINE,
      "durable at commit (as durable as the server's fsync setting)",
      "one row per object in a real PostgreSQL database (backends may share it, each keeps its own rows):"
          + " the disk-based baseline",
      List.of(StoreConfig.DATABASE_URL), StoreEngine.sealedWhole(PostgresStore::open), PostgresStore::erase);

  private PostgresEngine() {}
}
