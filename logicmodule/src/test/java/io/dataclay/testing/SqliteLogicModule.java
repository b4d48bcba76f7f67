package io.dataclay.testing;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A {@link LogicModuleFixture} per test on a fresh embedded database in a directory of its own,
 * closed and removed after the test. Register it as a {@code @RegisterExtension} field: before
 * each test (and before the class's own {@code @BeforeEach} methods) it sets every
 * {@code LogicModuleFixture} field of the test instance, as JUnit's {@code @TempDir} sets a
 * directory field; {@link #lm()} answers the same fixture.
 */
public final class SqliteLogicModule implements BeforeEachCallback, AfterEachCallback {
  private Path dir;
  private String url;
  private LogicModuleFixture lm;

  @Override
  public void beforeEach(ExtensionContext context) throws IOException, IllegalAccessException {
    dir = Files.createTempDirectory("lm-test");
    url = "jdbc:sqlite:" + dir.resolve("metadata.db");
    lm = new LogicModuleFixture(url);
    for (Object test : context.getRequiredTestInstances().getAllInstances()) {
      for (Class<?> c = test.getClass(); c != Object.class; c = c.getSuperclass()) {
        for (Field f : c.getDeclaredFields()) {
          if (f.getType() == LogicModuleFixture.class && !Modifier.isStatic(f.getModifiers())) {
            f.setAccessible(true);
            f.set(test, lm);
          }
        }
      }
    }
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
