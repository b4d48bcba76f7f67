package io.dataclay.ds.ee;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(30)
class EnvironmentSupervisorTest {
  @TempDir Path tmp;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private final List<EnvironmentSupervisor> started = new ArrayList<>();
  private final List<EnvironmentSupervisor.Spawn> spawns = new CopyOnWriteArrayList<>();
  private final List<Integer> exits = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    started.forEach(EnvironmentSupervisor::close);
    timer.shutdownNow();
  }

  private Path script(String body) throws Exception {
    Path p = tmp.resolve("fake-python-" + System.nanoTime());
    Files.writeString(p, "#!/bin/sh\n" + body + "\n");
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx------"));
    return p;
  }

  private EnvironmentSupervisor supervise(Path script, Map<String, String> env) {
    return supervise(script, env, new RestartBackoff());
  }

  private EnvironmentSupervisor supervise(Path script, Map<String, String> env, RestartBackoff backoff) {
    EnvironmentSupervisor s = new EnvironmentSupervisor(List.of(script.toString(), "-m", "dataclay._internal.ee"),
        env, timer, backoff, new EnvironmentSupervisor.Listener() {
          @Override
          public void spawned(EnvironmentSupervisor.Spawn spawn) {
            spawns.add(spawn);
          }

          @Override
          public void exited(EnvironmentSupervisor.Spawn spawn, int exitCode) {
            exits.add(exitCode);
          }
        });
    started.add(s);
    s.start();
    return s;
  }

  private static int lines(Path file) {
    try {
      return Files.exists(file) ? Files.readAllLines(file).size() : 0;
    } catch (java.io.IOException e) {
      return 0;
    }
  }

  private static void waitUntil(java.util.function.BooleanSupplier condition) throws InterruptedException {
    while (!condition.getAsBoolean()) {
      Thread.sleep(10);
    }
  }

  @Test
  void a_crashing_environment_is_restarted_with_doubling_delays() throws Exception {
    // setup: a "python" that exits at once with code 1
    Path log = tmp.resolve("starts");
    Path crash = script("date +%s%N >> " + log + "\nexit 1");
    // run
    EnvironmentSupervisor s = supervise(crash, Map.of("PATH", System.getenv("PATH")));
    waitUntil(() -> lines(log) >= 5);
    // verify: restarts counted, each with a fresh secret, and gaps growing ~0.1, 0.2, 0.4 s
    List<Long> starts = Files.readAllLines(log).stream().map(Long::parseLong).toList();
    assertTrue(starts.size() >= 5, "starts: " + starts);
    long[] gapsMs = new long[4];
    for (int i = 0; i < 4; i++) {
      gapsMs[i] = (starts.get(i + 1) - starts.get(i)) / 1_000_000;
    }
    assertTrue(gapsMs[0] >= 90 && gapsMs[0] < 1000, "first gap " + gapsMs[0]);
    assertTrue(gapsMs[1] >= 190, "second gap " + gapsMs[1]);
    assertTrue(gapsMs[2] >= 390, "third gap " + gapsMs[2]);
    assertTrue(gapsMs[3] >= 790, "fourth gap " + gapsMs[3]);
    assertEquals(1, (int) exits.get(0));
    assertNotEquals(spawns.get(0).secret(), spawns.get(1).secret());
  }

  @Test
  void the_spawned_process_gets_its_environment_and_its_secret_on_standard_input_only() throws Exception {
    // setup
    Path out = tmp.resolve("env");
    // it prints the secret it read on standard input, and how many environment variables hold it (none)
    Path dump = script("read secret; echo \"$secret $EXTRA_KEY $1 $2 $(env | grep -c \"$secret\")\" > " + out
        + ".tmp && mv " + out + ".tmp " + out
        + "\nexec sleep 60");
    // run
    EnvironmentSupervisor s = supervise(dump, Map.of("PATH", System.getenv("PATH"), "EXTRA_KEY", "extra-value"));
    waitUntil(() -> Files.exists(out));
    // verify
    String secret = s.current().secret();
    assertEquals(secret + " extra-value -m dataclay._internal.ee 0", Files.readString(out).trim());
    assertTrue(secret.length() >= 40, secret);
    assertTrue(s.current().alive());
  }

  @Test
  void exit_code_3_is_restarted_without_backoff() throws Exception {
    // setup: a backoff of 20 s, and a first process that lives over a second, then asks for a restart
    Path marker = tmp.resolve("asked");
    Path log = tmp.resolve("starts");
    Path asks = script("echo start >> " + log + "\nif [ ! -e " + marker + " ]; then touch " + marker
        + "; sleep 1.1; exit 3; fi\nexec sleep 60");
    // run
    EnvironmentSupervisor s = supervise(asks, Map.of("PATH", System.getenv("PATH")),
        new RestartBackoff(20_000, 20_000, 30_000));
    // verify: restarted well before any backoff delay could have elapsed
    waitUntil(() -> lines(log) >= 2);
    assertEquals(1, s.restarts());
    assertEquals(3, (int) exits.get(0));
  }

  @Test
  void close_kills_a_process_that_ignores_sigterm() throws Exception {
    // setup
    Path ready = tmp.resolve("ready");
    Path stubborn = script("trap '' TERM\ntouch " + ready + "\nwhile true; do sleep 0.05; done");
    EnvironmentSupervisor s = supervise(stubborn, Map.of("PATH", System.getenv("PATH")));
    waitUntil(() -> Files.exists(ready));
    Process p = s.current().process();
    // run
    long t0 = System.nanoTime();
    s.close();
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    // verify: gone after SIGKILL at ~2 s, and not restarted
    assertFalse(p.isAlive());
    assertTrue(tookMs >= 1900 && tookMs < 4000, "took " + tookMs);
    Thread.sleep(300);
    assertEquals(0, s.restarts());
  }

  @Test
  void an_interpreter_that_cannot_be_started_is_retried_with_backoff() throws Exception {
    // run
    EnvironmentSupervisor s = supervise(tmp.resolve("no-such-python"), Map.of());
    waitUntil(() -> s.restarts() >= 2);
    // verify
    assertEquals(-1, (int) exits.get(0));
    assertFalse(s.current().alive());
  }
}
