package io.dataclay.logic.metadata;

import io.dataclay.testing.PostgresDatabases;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The metadata conformance suite on a real PostgreSQL server, one fresh database per test. */
class PostgresMetadataStoreTest extends MetadataStoreConformance {
  @RegisterExtension
  static final PostgresDatabases POSTGRES = new PostgresDatabases("conformance");

  @Override
  protected String freshDatabaseUrl() throws Exception {
    return POSTGRES.fresh();
  }
}
