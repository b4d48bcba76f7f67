package io.dataclay.logic.metadata;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The listing conformance suite on the embedded SQLite database. */
class SqliteListingTest extends ListingConformance {
  @TempDir
  Path dir;

  @Override
  protected String freshDatabaseUrl() {
    return "jdbc:sqlite:" + dir.resolve("lm").resolve("metadata.db");
  }
}
