package io.dataclay.ds.ee;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.server.testing.Eventually;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
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

/** One supervised process, really started: restarts with backoff, its command and streams, and stopping it. */
@Timeout(30)
class EnvironmentSupervisorTest {
  @TempDir Path tmp;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
      r -> new Thread(r, "test-supervisor-timer"));
  private final List<String> spawnedOn = new CopyOnWriteArrayList<>();
  private final List<EnvironmentSupervisor> started = new ArrayList<>();
  private final List<EnvironmentSupervisor.Spawn> spawns = new CopyOnWriteArrayList<>();
  private final List<Integer> exits = new CopyOnWriteArrayList<>();
  private final List<Long> descendants = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    started.forEach(EnvironmentSupervisor::close);
    descendants.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
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
            spawnedOn.add(Thread.currentThread().getName());
            spawns.add(spawn);
          }

          @Override
          public void exited(EnvironmentSupervisor.Spawn spawn, int exitCode) {
            exits.add(exitCode);
          }
        }, "test environment");
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

  private static void waitUntil(Eventually.Condition condition) throws InterruptedException {
    Eventually.await(Duration.ofSeconds(20), condition, "the fake environment's side effect");
  }

  @Test
  void a_crashing_environment_is_restarted_with_doubling_delays() throws Exception {
    // setup: a "python" that exits at once with code 1
    Path log = tmp.resolve("starts");
    Path crash = script("date +%s%N >> " + log + "\nexit 1");
    // run
    EnvironmentSupervisor s = supervise(crash, Map.of("PATH", System.getenv("PATH")));
    waitUntil(() -> lines(log) >= 5);
    // verify: restarts counted, and gaps growing ~0.1, 0.2, 0.4 s
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
    assertTrue(s.restarts() >= 4, "restarts " + s.restarts());
    assertNotEquals(spawns.get(0).generation(), spawns.get(1).generation());
  }

  @Test
  void the_process_gets_exactly_its_command_and_environment_and_its_standard_input_and_output_are_the_link()
      throws Exception {
    // setup: it answers a line read on standard input with what it was given, on standard output
    Path echo = script("read line; echo \"got=$line extra=$EXTRA_KEY home=${HOME:-unset} args=$*\"\nexec sleep 60");
    EnvironmentSupervisor s = supervise(echo, Map.of("PATH", System.getenv("PATH"), "EXTRA_KEY", "extra-value"));
    waitUntil(() -> s.current() != null && s.current().alive());
    Process p = s.current().process();
    // run: through the pipe the supervisor made (the process's own output stream leads nowhere)
    s.current().input().blocking().write("ping\n".getBytes());
    s.current().input().blocking().flush();
    String answer = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream())).readLine();
    // verify: nothing of the Data Service's own environment (HOME) was inherited; spawned on the timer's thread
    assertEquals("got=ping extra=extra-value home=unset args=-m dataclay._internal.ee", answer);
    assertEquals(List.of("test-supervisor-timer"), spawnedOn);
    assertEquals(p.pid(), s.current().pid());
  }

  @Test
  void terminate_stops_the_process_and_the_supervisor_restarts_it() throws Exception {
    // setup
    Path sleeper = script("exec sleep 60");
    EnvironmentSupervisor s = supervise(sleeper, Map.of("PATH", System.getenv("PATH")));
    waitUntil(() -> s.current() != null && s.current().alive());
    EnvironmentSupervisor.Spawn first = s.current();
    // run
    s.terminate(first, "the test asked");
    waitUntil(() -> spawns.size() >= 2 && s.current().alive());
    // verify: SIGTERM ended the first, a second generation runs
    assertFalse(first.alive());
    assertEquals(143, (int) exits.get(0));
    assertEquals(1, s.restarts());
    assertEquals(2, s.current().generation());
    assertNotEquals(first.pid(), s.current().pid());
  }

  @Test
  void close_stops_the_processes_descendants_too() throws Exception {
    assertCloseEndsDescendants("");
  }

  @Test
  void close_kills_descendants_that_ignore_sigterm_even_when_the_process_itself_exits_at_once() throws Exception {
    assertCloseEndsDescendants("trap '' TERM; ");
  }

  /** A child and a grandchild (running {@code prefix} first), each recording its process ID, are gone after close. */
  private void assertCloseEndsDescendants(String prefix) throws Exception {
    // setup
    Path child = tmp.resolve("child");
    Path grandchild = tmp.resolve("grandchild");
    Path grand = script(prefix + "sleep 600 & echo $! > " + grandchild + ".tmp; mv " + grandchild + ".tmp " + grandchild
        + "; wait");
    Path forks = script("'" + grand + "' &\n(" + prefix + "exec sleep 600) & echo $! > " + child + ".tmp; mv " + child
        + ".tmp " + child + "\nwait");
    EnvironmentSupervisor s = supervise(forks, Map.of("PATH", System.getenv("PATH")));
    waitUntil(() -> Files.exists(child) && Files.exists(grandchild));
    long childPid = Long.parseLong(Files.readString(child).trim());
    long grandchildPid = Long.parseLong(Files.readString(grandchild).trim());
    descendants.addAll(List.of(childPid, grandchildPid));
    assertTrue(alive(childPid) && alive(grandchildPid));
    // run
    s.close();
    // verify: within the SIGKILL delay and a margin
    Eventually.await(Duration.ofSeconds(4), () -> !alive(childPid), "the child to end with close()");
    Eventually.await(Duration.ofSeconds(4), () -> !alive(grandchildPid), "the grandchild to end with close()");
    assertFalse(s.current().alive());
    assertEquals(0, s.restarts());
  }

  private static boolean alive(long pid) {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
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
    waitUntil(() -> Files.exists(ready) && s.current() != null);
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
