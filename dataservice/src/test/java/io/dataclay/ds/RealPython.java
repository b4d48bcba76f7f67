package io.dataclay.ds;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The interpreter with pyclay installed that real execution environments run on: system property
 * {@code dataclay.python}, else environment variable DATACLAY_TEST_PYTHON, else the repository's
 * {@code .venv/bin/python} (what {@code make build} creates), found from the working directory up.
 */
public final class RealPython {
  private RealPython() {}

  /** The interpreter, if there is one that imports pyclay's sandbox and environment. */
  public static Optional<Path> find() {
    String given = System.getProperty("dataclay.python", System.getenv("DATACLAY_TEST_PYTHON"));
    Path candidate = given != null && !given.isBlank() ? Path.of(given) : venv();
    if (candidate == null || !Files.isExecutable(candidate) || !importsPyclay(candidate)) {
      return Optional.empty();
    }
    return Optional.of(candidate.toAbsolutePath());
  }

  /** Why no interpreter was found, for a skipped test. */
  public static String missing() {
    return "no interpreter with pyclay (set -Ddataclay.python or DATACLAY_TEST_PYTHON, or run `make build` to "
        + "create .venv)";
  }

  private static Path venv() {
    for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
      Path p = d.resolve(".venv").resolve("bin").resolve("python");
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }

  private static boolean importsPyclay(Path python) {
    try {
      Process p = new ProcessBuilder(python.toString(), "-c", "import dataclay._internal.sandbox, dataclay._internal.ee")
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (java.io.IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
