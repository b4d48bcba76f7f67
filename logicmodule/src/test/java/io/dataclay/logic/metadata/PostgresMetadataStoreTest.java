package io.dataclay.logic.metadata;

import io.dataclay.testing.PostgresServer;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The metadata conformance suite on a real PostgreSQL server, one fresh database per test. */
class PostgresMetadataStoreTest extends MetadataStoreConformance {
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
    return postgres.createDatabase("conformance_" + DATABASES.incrementAndGet());
  }
}
