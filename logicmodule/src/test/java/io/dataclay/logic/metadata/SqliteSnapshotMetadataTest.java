package io.dataclay.logic.metadata;

import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.io.TempDir;

/** The snapshot metadata contract on the embedded SQLite database. */
class SqliteSnapshotMetadataTest extends SnapshotMetadataContract {
  private final AtomicInteger databases = new AtomicInteger();
  @TempDir
  Path dir;

  @Override
  protected String freshDatabaseUrl() {
    return "jdbc:sqlite:" + dir.resolve("lm-" + databases.incrementAndGet()).resolve("metadata.db");
  }
}
