package io.dataclay.ds.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Drives the crash-recovery tests: runs {@link CrashWriter} in a child JVM, kills it with SIGKILL
 * at a random moment, reopens the pool and checks what the engine promises. Durable at return:
 * every acknowledged write is there, a write in flight is whole or absent (a batch all or
 * nothing). Durable at checkpoint: every write acknowledged before the last completed checkpoint
 * is there, and each object is in that state or in one written after it. Always: no object is
 * torn and no unknown object appeared. The state found becomes the expectation of the next
 * round, so later rounds also check that recovery left earlier objects alone.
 */
final class CrashScenario {
  private static final String ABSENT = "(absent)";

  private final StoreConfig config;
  private final Supplier<ObjectStore> reopen;
  private final Random rng;
  private final boolean atCheckpoint;
  private final Map<UUID, String> expected = new HashMap<>();
  private int checkpoints;

  CrashScenario(StoreConfig config, Supplier<ObjectStore> reopen, long seed, boolean atCheckpoint) {
    this.config = config;
    this.reopen = reopen;
    this.rng = new Random(seed);
    this.atCheckpoint = atCheckpoint;
  }

  /** Objects the scenario expects in the pool after the last round. */
  int expectedObjects() {
    return expected.size();
  }

  /** Checkpoints the writers completed in all rounds. */
  int checkpointsSeen() {
    return checkpoints;
  }

  /** One round: start the writer, let it acknowledge some writes, kill it, verify the pool. */
  void runRound(long seed) throws Exception {
    Path output = Files.createTempFile("crash-writer", ".log");
    Path stderr = Files.createTempFile("crash-writer", ".err");
    String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp", classPath, CrashWriter.class.getName()));
    command.addAll(CrashWriter.arguments(config, seed, output, atCheckpoint));
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.redirectError(stderr.toFile());
    builder.redirectOutput(ProcessBuilder.Redirect.DISCARD);
    Process child = builder.start();
    List<String> log;
    try {
      awaitAcks(child, output, 40, stderr);
      Thread.sleep(rng.nextInt(300));
    } finally {
      child.destroyForcibly();
      assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the killed writer did not exit");
      log = wholeLines(output);
      Files.deleteIfExists(output);
      Files.deleteIfExists(stderr);
    }
    if (atCheckpoint) {
      verifyAtCheckpoint(log);
    } else {
      verify(log);
    }
  }

  private void verifyAtCheckpoint(List<String> log) {
    Map<UUID, String> acked = new HashMap<>(expected);
    Map<UUID, String> durable = new HashMap<>(expected);
    Map<UUID, Set<String>> later = new HashMap<>();
    for (String line : log) {
      String[] p = line.split(" ");
      switch (p[0]) {
        case "BEGIN" -> later.computeIfAbsent(UUID.fromString(p[1]), k -> new HashSet<>()).add(p[2]);
        case "ACK" -> acked.put(UUID.fromString(p[1]), p[2]);
        case "BEGIN-DEL" -> later.computeIfAbsent(UUID.fromString(p[1]), k -> new HashSet<>()).add(ABSENT);
        case "DEL" -> acked.remove(UUID.fromString(p[1]));
        case "BEGIN-GROUP" -> {
          for (UUID id : ids(p[1])) {
            later.computeIfAbsent(id, k -> new HashSet<>()).add(p[2]);
          }
        }
        case "GROUP" -> {
          for (UUID id : ids(p[1])) {
            acked.put(id, p[2]);
          }
        }
        case "CKPT" -> {
          // Every write acknowledged so far must survive from here on; only later ones may not.
          durable.clear();
          durable.putAll(acked);
          later.clear();
          checkpoints++;
        }
        default -> { }
      }
    }
    Map<UUID, String> found = readBack();
    Set<UUID> all = new HashSet<>(durable.keySet());
    all.addAll(later.keySet());
    all.addAll(found.keySet());
    for (UUID id : all) {
      String state = found.getOrDefault(id, ABSENT);
      String atLastCheckpoint = durable.getOrDefault(id, ABSENT);
      Set<String> written = later.getOrDefault(id, Set.of());
      assertTrue(state.equals(atLastCheckpoint) || written.contains(state), "object " + id + " is " + state
          + ", but was " + atLastCheckpoint + " at the last checkpoint and written since as " + written + "; "
          + history(log, id));
    }
    expected.clear();
    expected.putAll(found);
  }

  private Map<UUID, String> readBack() {
    Map<UUID, String> found = new HashMap<>();
    try (ObjectStore store = reopen.get()) {
      store.forEachId(id -> found.put(id, TestObjects.tagOf(store.get(id).orElseThrow())));
    }
    return found;
  }

  private void verify(List<String> log) {
    Map<UUID, String> acked = new HashMap<>(expected);
    Map<UUID, String> inFlight = new HashMap<>();
    Set<UUID> deleting = new HashSet<>();
    List<UUID> group = List.of();
    String groupTag = null;
    for (String line : log) {
      String[] p = line.split(" ");
      switch (p[0]) {
        case "BEGIN" -> inFlight.put(UUID.fromString(p[1]), p[2]);
        case "ACK" -> {
          acked.put(UUID.fromString(p[1]), p[2]);
          inFlight.remove(UUID.fromString(p[1]));
        }
        case "BEGIN-DEL" -> deleting.add(UUID.fromString(p[1]));
        case "DEL" -> {
          acked.remove(UUID.fromString(p[1]));
          deleting.remove(UUID.fromString(p[1]));
        }
        case "BEGIN-GROUP" -> {
          group = ids(p[1]);
          groupTag = p[2];
        }
        case "GROUP" -> {
          for (UUID id : ids(p[1])) {
            acked.put(id, p[2]);
          }
          group = List.of();
        }
        default -> { }
      }
    }
    Map<UUID, String> found = readBack();
    for (Map.Entry<UUID, String> e : acked.entrySet()) {
      UUID id = e.getKey();
      String tag = found.get(id);
      if (tag == null) {
        assertTrue(deleting.contains(id), "acknowledged object " + id + " is missing; " + history(log, id));
      } else if (!tag.equals(e.getValue())) {
        assertEquals(inFlight.get(id), tag, "object " + id + " is neither acknowledged nor in flight; " + history(log, id));
      }
    }
    int groupFound = 0;
    for (UUID id : group) {
      if (found.containsKey(id)) {
        assertEquals(groupTag, found.get(id), "object " + id + " of the batch in flight");
        groupFound++;
      }
    }
    assertTrue(groupFound == 0 || groupFound == group.size(), "a batch in flight was stored in part: " + groupFound);
    for (Map.Entry<UUID, String> e : found.entrySet()) {
      UUID id = e.getKey();
      boolean known = acked.containsKey(id) || e.getValue().equals(inFlight.get(id)) || group.contains(id);
      assertTrue(known, "object " + id + " (" + e.getValue() + ") was never written");
    }
    expected.clear();
    expected.putAll(found);
  }

  private static String history(List<String> log, UUID id) {
    List<String> mine = log.stream().filter(line -> line.contains(id.toString())).toList();
    return "its last writes: " + mine.subList(Math.max(0, mine.size() - 6), mine.size());
  }

  private static List<UUID> ids(String joined) {
    List<UUID> ids = new ArrayList<>();
    for (String s : joined.split(",")) {
      ids.add(UUID.fromString(s));
    }
    return ids;
  }

  /** The log's whole lines (a line cut by the kill lacks its " ." end), without the end. */
  private static List<String> wholeLines(Path output) throws IOException {
    List<String> lines = new ArrayList<>();
    for (String line : Files.readAllLines(output, StandardCharsets.UTF_8)) {
      if (line.endsWith(" .")) {
        lines.add(line.substring(0, line.length() - 2));
      }
    }
    return lines;
  }

  private static void awaitAcks(Process child, Path output, int acks, Path stderr) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (wholeLines(output).stream().filter(l -> l.startsWith("ACK")).count() < acks) {
      if (!child.isAlive()) {
        fail("the writer exited early with " + child.exitValue() + ": " + Files.readString(stderr));
      }
      if (System.nanoTime() > deadline) {
        fail("the writer acknowledged too few writes in 60 s: " + Files.readString(stderr));
      }
      Thread.sleep(20);
    }
  }
}
