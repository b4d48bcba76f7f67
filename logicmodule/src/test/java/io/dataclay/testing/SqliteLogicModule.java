package io.dataclay.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A {@link LogicModuleFixture} per test on a fresh embedded database in a directory of its own,
 * closed and removed after the test. Register it as a {@code @RegisterExtension} field and take
 * the fixture with {@link #lm()} (in a {@code @BeforeEach} or the test).
 */
public final class SqliteLogicModule implements BeforeEachCallback, AfterEachCallback {
  private Path dir;
  private String url;
  private LogicModuleFixture lm;

  @Override
  public void beforeEach(ExtensionContext context) throws IOException {
    dir = Files.createTempDirectory("lm-test");
    url = "jdbc:sqlite:" + dir.resolve("metadata.db");
    lm = new LogicModuleFixture(url);
  }

  @Override
  public void afterEach(ExtensionContext context) throws IOException {
    try {
      if (lm != null) {
        lm.close();
      }
    } finally {
      try (Stream<Path> files = Files.walk(dir)) {
        for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  /** This test's Logic Module. */
  public LogicModuleFixture lm() {
    return lm;
  }

  /** Closes the Logic Module and starts a new one on the same database and clock (a restart). */
  public LogicModuleFixture restart() {
    lm.close();
    lm = new LogicModuleFixture(url, lm.clock);
    return lm;
  }
}
