package io.dataclay.ds.ee;

import io.dataclay.ds.store.Setting;
import io.dataclay.exceptions.InvalidArgumentException;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * How a Data Service runs model code: the confinement of its execution-environment processes and
 * the share each account gets. Read from the Data Service's environment (its configuration is the
 * only reader); invalid values fail at start, naming the key.
 *
 * @param confinement {@value #CONFINEMENT}
 * @param javaInProcess {@value #JAVA}
 * @param memoryMb {@value #MEMORY_MB}
 * @param maxTasks {@value #MAX_TASKS}
 * @param threads {@value #THREADS}
 * @param maxQueued {@value #MAX_QUEUED}
 * @param maxProcesses {@value #MAX_PROCESSES}
 * @param idleMs {@value #IDLE_S}
 * @param callTimeoutMs {@value #CALL_TIMEOUT_S}
 * @param launcher {@value #LAUNCHER} (null: the interpreter's {@code -m} form)
 * @param spares {@value #SPARES}
 * @param outputBytesPerSecond {@value #OUTPUT_BYTES_S}
 * @param residentMb {@value #RESIDENT_MB}, resolved (never 0)
 */
public record EnvironmentSettings(String confinement, boolean javaInProcess, int memoryMb, int maxTasks, int threads,
    int maxQueued, int maxProcesses, long idleMs, long callTimeoutMs, String launcher, int spares,
    int outputBytesPerSecond, int residentMb) {
  /**
   * How model code is confined: {@code auto} (default: bubblewrap's namespaces with the kernel's
   * Landlock, seccomp and limits inside, or those kernel layers alone where bubblewrap cannot run;
   * refused where neither can), {@code bwrap}, {@code kernel}, or {@code none} (unconfined: only
   * for a cluster whose only user is its owner).
   */
  public static final String CONFINEMENT = "DATACLAY_EE_CONFINEMENT";
  /**
   * {@code confined} (default): Java methods run in confined Java environment processes, one per
   * account, like Python's; {@code in-process}: in the Data Service's own JVM, faster but trusted
   * with the whole node (only for a cluster whose only user is its owner, e.g. a Slurm job's own).
   */
  public static final String JAVA = "DATACLAY_JAVA_EE";
  /** Memory (MiB) an environment process may map (Java: its heap gets half). Default 4096. */
  public static final String MEMORY_MB = "DATACLAY_EE_MEMORY_MB";
  /** Processes and threads an environment process may run at once. Default 512. */
  public static final String MAX_TASKS = "DATACLAY_EE_MAX_TASKS";
  /** Calls one account may have running at once on this backend (its environment's threads). Default 16. */
  public static final String THREADS = "DATACLAY_EE_THREADS";
  /** Calls one account may have waiting for a thread; more are refused with QUOTA_EXCEEDED. Default 1024. */
  public static final String MAX_QUEUED = "DATACLAY_EE_MAX_QUEUED";
  /** Environment processes per language on this backend (one per active account). Default 64. */
  public static final String MAX_PROCESSES = "DATACLAY_EE_MAX_PROCESSES";
  /** Seconds an account's environment stays up without calls before it is stopped. Default 600. */
  public static final String IDLE_S = "DATACLAY_EE_IDLE_S";
  /**
   * Seconds one method call may run before it fails with CALL_TIMED_OUT and its environment is
   * restarted (nothing the call changed is stored); 0: no deadline. Default 1800.
   */
  public static final String CALL_TIMEOUT_S = "DATACLAY_CALL_TIMEOUT_S";

  /**
   * Directory of pyclay's sandbox package ({@code .../dataclay/_internal/sandbox}), which the
   * interpreter runs as a script: about 150 ms faster per process start than {@code -m}, which
   * imports the whole client first. The {@code dataclay} launchers set it. Default: unset.
   */
  public static final String LAUNCHER = "DATACLAY_EE_LAUNCHER";

  /**
   * Processes per language kept started ahead, confined and with no model, for the next account's
   * first call (Java's only once a Java model is deployed): an account's first call then does not
   * wait for an interpreter or a JVM to start. 0 or 1. Default 1.
   */
  public static final String SPARES = "DATACLAY_EE_SPARES";

  /**
   * Bytes a second one environment process (one account's, on this backend) may write to the Data
   * Service's log on average: what model code prints and logs, and the process's own lines. Bursts of
   * 64 seconds' worth pass; what is over is left out and counted in one line. Default 16384 (16 KiB/s,
   * bursts of 1 MiB); 0 leaves all of it out.
   */
  public static final String OUTPUT_BYTES_S = "DATACLAY_EE_OUTPUT_BYTES_S";

  /**
   * Stored MiB of objects one Python environment process keeps in memory: past it, the objects used
   * least recently that no call in flight has touched are unloaded, and reloaded from the store when
   * used again. 0 (default): a quarter of {@value #MEMORY_MB}.
   */
  public static final String RESIDENT_MB = "DATACLAY_EE_RESIDENT_MB";

  private static final Set<String> MODES = Set.of("auto", "bwrap", "kernel", "none");

  /** These keys with their defaults and meanings: the part of the Data Service's table they make. */
  public static final List<Setting> TABLE = List.of(
      new Setting(CONFINEMENT, "auto", "How model code is confined: auto (bubblewrap with Landlock, seccomp and"
          + " limits, or the kernel layers alone), bwrap, kernel, or none (only for a cluster whose only user is its"
          + " owner)."),
      new Setting(JAVA, "confined", "confined: Java methods run in confined Java environment processes, one per"
          + " account; in-process: in the Data Service's JVM, trusted with the whole node."),
      new Setting(MEMORY_MB, "4096", "Memory (MiB) an environment process may map (Java: its heap gets half)."),
      new Setting(MAX_TASKS, "512", "Processes and threads an environment process may run at once."),
      new Setting(THREADS, "16", "Calls one account may have running at once on this backend."),
      new Setting(MAX_QUEUED, "1024", "Calls one account may have waiting for a thread; more are refused with"
          + " QUOTA_EXCEEDED."),
      new Setting(MAX_PROCESSES, "64", "Environment processes per language on this backend (one per active"
          + " account)."),
      new Setting(IDLE_S, "600", "Seconds an account's environment stays up without calls before it is stopped."),
      new Setting(CALL_TIMEOUT_S, "1800", "Seconds one method call may run before it fails with CALL_TIMED_OUT"
          + " and its environment is restarted; 0: no deadline."),
      new Setting(LAUNCHER, "", "Directory of pyclay's sandbox package, run as a script (set by the dataclay"
          + " launchers); unset: the interpreter's -m form."),
      new Setting(SPARES, "1", "Processes per language kept started ahead for the next account's first call (0"
          + " or 1)."),
      new Setting(OUTPUT_BYTES_S, "16384", "Bytes a second one environment process may write to the Data"
          + " Service's log on average (bursts of 64 seconds' worth); 0 leaves all of it out."),
      new Setting(RESIDENT_MB, "0", "Stored MiB of objects one Python environment process keeps in memory; past it"
          + " the idle objects used least recently are unloaded (0: a quarter of DATACLAY_EE_MEMORY_MB)."));

  /** The settings in {@code env} (unset keys take their defaults from {@link #TABLE}). */
  public static EnvironmentSettings from(Map<String, String> env) {
    String mode = text(env, CONFINEMENT);
    if (!MODES.contains(mode)) {
      throw new InvalidArgumentException(CONFINEMENT + " must be auto, bwrap, kernel or none, not " + mode);
    }
    String java = text(env, JAVA);
    if (!java.equals("confined") && !java.equals("in-process")) {
      throw new InvalidArgumentException(JAVA + " must be confined or in-process, not " + java);
    }
    int memoryMb = number(env, MEMORY_MB, 64, 1 << 24);
    int residentMb = number(env, RESIDENT_MB, 0, 1 << 24);
    return new EnvironmentSettings(mode, java.equals("in-process"), memoryMb,
        number(env, MAX_TASKS, 16, 1 << 20), number(env, THREADS, 1, 4096),
        number(env, MAX_QUEUED, 0, 1 << 24), number(env, MAX_PROCESSES, 1, 100_000),
        number(env, IDLE_S, 1, Integer.MAX_VALUE) * 1000L,
        number(env, CALL_TIMEOUT_S, 0, Integer.MAX_VALUE) * 1000L, text(env, LAUNCHER),
        number(env, SPARES, 0, 1), number(env, OUTPUT_BYTES_S, 0, 1 << 30),
        residentMb == 0 ? memoryMb / 4 : residentMb);
  }

  /** The value of {@code key} in {@code env}, or its default in {@link #TABLE} (null for an empty one). */
  private static String text(Map<String, String> env, String key) {
    String v = env.get(key);
    if (v != null && !v.isBlank()) {
      return v.trim();
    }
    String fallback = TABLE.stream().filter(s -> s.key().equals(key)).findFirst()
        .orElseThrow(() -> new IllegalStateException(key + " is not in the environment settings table"))
        .defaultValue();
    return fallback.isEmpty() ? null : fallback;
  }

  private static int number(Map<String, String> env, String key, int min, int max) {
    String v = text(env, key);
    try {
      int n = Integer.parseInt(v);
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new InvalidArgumentException(key + " must be a whole number from " + min + " to " + max + ", not " + v);
  }
}
