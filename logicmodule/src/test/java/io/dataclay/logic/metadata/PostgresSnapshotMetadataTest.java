package io.dataclay.logic.metadata;

import io.dataclay.testing.PostgresDatabases;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The snapshot metadata contract on a real PostgreSQL server, a fresh database each time. */
class PostgresSnapshotMetadataTest extends SnapshotMetadataContract {
  @RegisterExtension
  static final PostgresDatabases POSTGRES = new PostgresDatabases("snapshot");

  @Override
  protected String freshDatabaseUrl() throws Exception {
    return POSTGRES.fresh();
  }
}
