package io.dataclay.ds.store.postgres;

import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.Setting;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.StoreEngine;
import io.dataclay.ds.store.crypt.Encryption;
import java.util.List;

/** The {@code postgres} engine in the registry: one row per object in a PostgreSQL database ({@link PostgresStore}). */
public final class PostgresEngine implements StoreEngine {
  @Override
  public String name() {
    return PostgresStore.ENGINE;
  }

  @Override
  public String durability() {
    return "durable at commit (as durable as the server's fsync setting)";
  }

  @Override
  public String description() {
    return "one row per object in a real PostgreSQL database (backends may share it, each keeps its own rows):"
        + " the disk-based baseline";
  }

  @Override
  public List<Setting> settings() {
    return List.of(StoreConfig.DATABASE_URL);
  }

  @Override
  public ObjectStore open(StoreConfig config, Encryption atRest) {
    return atRest.seal(PostgresStore.open(config, atRest.key()));
  }

  @Override
  public String erase(StoreConfig config) {
    return PostgresStore.erase(config);
  }
}
