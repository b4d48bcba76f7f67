package io.dataclay.ds.ee;

import io.dataclay.common.Language;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * How an execution-environment process is started: through the sandbox launcher
 * ({@code python -m dataclay._internal.sandbox}), which confines what it starts as
 * {@link EnvironmentSettings#confinement()} says, with the given environment (the launcher passes
 * the confined process only what it needs of it). Each process gets a slot of its own, which the
 * launcher turns into a user ID of its own when the Data Service runs as root.
 *
 * @param command the launcher's command line up to its slot option
 * @param inner the environment process's command line, run inside the sandbox
 * @param environment the launcher's environment: no credential, token or key file
 */
public record EnvironmentLaunch(Language language, List<String> command, List<String> inner, Map<String, String> environment) {
  /** The Java environment's main class. */
  static final String JAVA_MAIN = "io.dataclay.ds.ee.java.EnvironmentMain";

  /** Copies the lists. */
  public EnvironmentLaunch {
    command = List.copyOf(command);
    inner = List.copyOf(inner);
    environment = Map.copyOf(environment);
  }

  /** The whole command line of the process in {@code slot}, whose private directory is {@code tmp}. */
  List<String> command(int slot, String tmp) {
    List<String> out = new ArrayList<>(command);
    out.addAll(List.of("--uid-slot", Integer.toString(slot), "--tmp", tmp, "--"));
    out.addAll(inner);
    return out;
  }

  /**
   * The Python environment: {@code python} runs both the launcher and the environment, which
   * confines itself first thing (one interpreter start fewer).
   */
  public static EnvironmentLaunch python(String python, EnvironmentSettings s, Map<String, String> passed) {
    List<String> launcher = launcher(python, s, s.memoryMb());
    launcher.add("--self-confining");
    return new EnvironmentLaunch(Language.PYTHON, launcher, List.of(python, "-m", "dataclay._internal.ee"), passed);
  }

  /**
   * The Java environment: a JVM on this Data Service's class path, confined by the launcher's exec
   * step. Its heap is half the memory setting; the address-space bound leaves room for what a JVM
   * reserves besides (class space, code cache, thread stacks).
   */
  public static EnvironmentLaunch java(String python, EnvironmentSettings s, Map<String, String> passed, String javaHome,
      String classPath) {
    List<String> launcher = launcher(python, s, s.memoryMb() + 2048);
    for (String read : jdkReads(javaHome)) {
      launcher.addAll(List.of("--read", read));
    }
    for (String entry : classPath.split(java.io.File.pathSeparator)) {
      if (!entry.isBlank()) {
        launcher.addAll(List.of("--read", entry));
      }
    }
    List<String> jvm = List.of(javaHome + "/bin/java", "-Xmx" + Math.max(32, s.memoryMb() / 2) + "m",
        "-XX:MaxMetaspaceSize=256m", "-XX:ReservedCodeCacheSize=64m", "-XX:CompressedClassSpaceSize=128m",
        "-XX:-UsePerfData", "-XX:+UseSerialGC", "-Xshare:auto",
        "-Djava.io.tmpdir=/tmp", "-cp", classPath, JAVA_MAIN);
    Map<String, String> env = new TreeMap<>(passed);
    env.put("MALLOC_ARENA_MAX", "2");
    return new EnvironmentLaunch(Language.JAVA, launcher, jvm, env);
  }

  private static List<String> launcher(String python, EnvironmentSettings s, int memoryMb) {
    List<String> out = new ArrayList<>(s.launcher() == null ? List.of(python, "-m", "dataclay._internal.sandbox")
        : List.of(python, "-I", s.launcher()));
    out.addAll(List.of("--mode", s.confinement(), "--memory-mb", Integer.toString(memoryMb), "--max-processes",
        Integer.toString(s.maxTasks())));
    return out;
  }

  // What a JDK reads besides its own directory: the targets of links in conf/ and lib/ (Debian keeps
  // its configuration in /etc/java-17-openjdk).
  private static Set<String> jdkReads(String javaHome) {
    Set<String> out = new TreeSet<>();
    Path home = Path.of(javaHome);
    out.add(real(home).toString());
    for (String sub : List.of("conf", "lib")) {
      try (Stream<Path> entries = Files.list(home.resolve(sub))) {
        entries.filter(Files::isSymbolicLink).map(EnvironmentLaunch::real)
            .filter(p -> !p.startsWith(real(home)) && p.getParent() != null)
            .forEach(p -> out.add(p.getParent().toString()));
      } catch (IOException e) {
        // a JDK without that directory needs nothing from it
      }
    }
    return out;
  }

  private static Path real(Path p) {
    try {
      return p.toRealPath();
    } catch (IOException e) {
      return p.toAbsolutePath();
    }
  }
}
