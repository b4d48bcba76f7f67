package io.dataclay.logic.metadata;

import io.dataclay.testing.PostgresDatabases;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The metadata suites (store conformance, listing, snapshot contract) on one real PostgreSQL
 * server, started once for all three, with a fresh database per test.
 */
class PostgresMetadataTest {
  @RegisterExtension
  static final PostgresDatabases POSTGRES = new PostgresDatabases("metadata");

  /** The metadata conformance suite. */
  @Nested
  class Store extends MetadataStoreConformance {
    @Override
    protected String freshDatabaseUrl() throws Exception {
      return POSTGRES.fresh();
    }
  }

  /** The listing conformance suite. */
  @Nested
  class Listing extends ListingConformance {
    @Override
    protected String freshDatabaseUrl() throws Exception {
      return POSTGRES.fresh();
    }
  }

  /** The snapshot metadata contract. */
  @Nested
  class Snapshots extends SnapshotMetadataContract {
    @Override
    protected String freshDatabaseUrl() throws Exception {
      return POSTGRES.fresh();
    }
  }
}
