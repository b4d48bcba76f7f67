package io.dataclay.logic.metadata;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The metadata conformance suite on the embedded SQLite database (in a directory it must create). */
class SqliteMetadataStoreTest extends MetadataStoreConformance {
  @TempDir
  Path dir;

  @Override
  protected String freshDatabaseUrl() {
    return "jdbc:sqlite:" + dir.resolve("lm").resolve("metadata.db");
  }
}
