package io.dataclay.logic.metadata;

import io.dataclay.testing.PostgresDatabases;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The listing conformance suite on a real PostgreSQL server, one fresh database per test. */
class PostgresListingTest extends ListingConformance {
  @RegisterExtension
  static final PostgresDatabases POSTGRES = new PostgresDatabases("listing");

  @Override
  protected String freshDatabaseUrl() throws Exception {
    return POSTGRES.fresh();
  }
}
