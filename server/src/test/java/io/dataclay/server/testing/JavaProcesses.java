package io.dataclay.server.testing;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts JVMs running a main class on the tests' own class path, and kills every one still running
 * after each test, also when the test fails. Register it as a non-static {@code @RegisterExtension}
 * field; shared with the servers' tests through this module's test-jar.
 */
public final class JavaProcesses implements AfterEachCallback {
  private final List<Process> started = new ArrayList<>();

  /** A builder of {@code java -cp <the tests' class path> main}; adjust it, then {@link #start} it. */
  public ProcessBuilder builder(Class<?> main) {
    String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    return new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp", classpath,
        main.getName());
  }

  /** Starts {@code builder}'s process, killed after the test if it still runs. */
  public Process start(ProcessBuilder builder) throws IOException {
    Process p = builder.start();
    started.add(p);
    return p;
  }

  @Override
  public void afterEach(ExtensionContext context) throws InterruptedException {
    for (Process p : started) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
    started.clear();
  }
}
