package io.dataclay.logic.metadata;

import io.dataclay.testing.PostgresServer;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The listing conformance suite on a real PostgreSQL server, one fresh database per test. */
class PostgresListingTest extends ListingConformance {
  private static final AtomicInteger DATABASES = new AtomicInteger();
  private static PostgresServer postgres;

  @BeforeAll
  static void startPostgres() throws Exception {
    postgres = PostgresServer.start();
  }

  @AfterAll
  static void stopPostgres() {
    if (postgres != null) {
      postgres.close();
    }
  }

  @Override
  protected String freshDatabaseUrl() throws Exception {
    return postgres.createDatabase("listing_" + DATABASES.incrementAndGet());
  }
}
