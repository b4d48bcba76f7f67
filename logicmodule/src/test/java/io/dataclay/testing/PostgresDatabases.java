package io.dataclay.testing;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real PostgreSQL server for one test class, started before its tests and stopped after them, that
 * hands out a fresh database per call of {@link #fresh()}. Register it as a static
 * {@code @RegisterExtension} field.
 */
public final class PostgresDatabases implements BeforeAllCallback, AfterAllCallback {
  private final String prefix;
  private final AtomicInteger made = new AtomicInteger();
  private PostgresServer server;

  /** Databases are named {@code <prefix>_<n>}. */
  public PostgresDatabases(String prefix) {
    this.prefix = prefix;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    server = PostgresServer.start();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (server != null) {
      server.close();
    }
  }

  /** The JDBC URL of a new, empty database. */
  public String fresh() throws Exception {
    return server.createDatabase(prefix + "_" + made.incrementAndGet());
  }
}
