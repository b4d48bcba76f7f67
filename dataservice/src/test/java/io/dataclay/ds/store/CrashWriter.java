package io.dataclay.ds.store;

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;

/**
 * Child process of the crash-recovery tests: opens a store and writes until it is killed, logging
 * a line before each write ({@code BEGIN...}) and one after it returned ({@code ACK}, {@code DEL},
 * {@code GROUP}, {@code CKPT}) to a log file with one write(2) per line (what reached the kernel
 * survives the kill); each line ends with " ." so the parent can tell a whole line from one cut
 * by the kill. Writes mix whole puts, deltas (same-size in-place ones, growing and shrinking ones,
 * records over the in-place limit), removals and three-object putAll batches; with checkpoints on,
 * about one step in twenty is a {@link ObjectStore#checkpoint()}.
 *
 * <p>Arguments: see {@link #arguments}.
 */
public final class CrashWriter {
  private static final int OBJECTS = 24;

  private CrashWriter() {}

  /** The command-line arguments that make a writer open {@code config}. */
  static List<String> arguments(StoreConfig config, long seed, Path log, boolean checkpoints) {
    return List.of(config.engine(), config.path().toString(), Long.toString(config.sizeBytes()), config.backendName(),
        config.databaseUrl() == null ? "-" : config.databaseUrl(), Long.toString(config.cacheBytes()),
        Long.toString(config.checkpointMillis()), Long.toString(seed), log.toString(), Boolean.toString(checkpoints),
        config.keyFile() == null ? "-" : config.keyFile().toString());
  }

  /** Writes until killed; exits non-zero if a write fails. */
  public static void main(String[] args) throws IOException {
    StoreConfig config = new StoreConfig(args[0], Path.of(args[1]), Long.parseLong(args[2]), args[3],
        args[4].equals("-") ? null : args[4], Long.parseLong(args[5]), Long.parseLong(args[6]),
        args[10].equals("-") ? null : Path.of(args[10]));
    long seed = Long.parseLong(args[7]);
    boolean checkpoints = Boolean.parseBoolean(args[9]);
    Random rng = new Random(seed);
    try (FileOutputStream out = new FileOutputStream(args[8], true);
        ObjectStore store = ObjectStores.open(config)) {
      UUID[] ids = new UUID[OBJECTS];
      long[] versions = new long[OBJECTS];
      int[] paddings = new int[OBJECTS];
      for (int i = 0; i < OBJECTS; i++) {
        ids[i] = new UUID(seed, i);
      }
      say(out, "READY");
      for (long step = 1; ; step++) {
        int k = rng.nextInt(OBJECTS);
        int roll = rng.nextInt(100);
        if (checkpoints && roll < 5) {
          say(out, "BEGIN-CKPT");
          store.checkpoint();
          say(out, "CKPT");
        } else if (roll < 13) {
          String tag = TestObjects.tag("g", step, 10 + rng.nextInt(90), step % 3 == 0);
          List<StoredObject> group = new ArrayList<>();
          StringBuilder names = new StringBuilder();
          for (int g = 0; g < 3; g++) {
            UUID id = new UUID(rng.nextLong(), rng.nextLong());
            group.add(TestObjects.tagged(id, tag));
            names.append(g == 0 ? "" : ",").append(id);
          }
          say(out, "BEGIN-GROUP " + names + " " + tag);
          store.putAll(group);
          say(out, "GROUP " + names + " " + tag);
        } else if (roll < 17 && versions[k] > 0) {
          say(out, "BEGIN-DEL " + ids[k]);
          store.remove(ids[k]);
          versions[k] = 0;
          say(out, "DEL " + ids[k]);
        } else {
          long version = versions[k] + 1;
          int padding = padding(rng, paddings[k]);
          String tag = TestObjects.tag("w", version, padding, version % 3 == 0);
          say(out, "BEGIN " + ids[k] + " " + tag);
          if (versions[k] == 0 || rng.nextInt(3) == 0) {
            store.put(TestObjects.tagged(ids[k], tag));
          } else {
            store.applyDelta(TestObjects.taggedDelta(ids[k], tag));
          }
          versions[k] = version;
          paddings[k] = padding;
          say(out, "ACK " + ids[k] + " " + tag);
        }
      }
    }
  }

  /** Same size as before (in-place edits), small, or past the in-place limit (copy-on-write). */
  private static int padding(Random rng, int previous) {
    int roll = rng.nextInt(100);
    if (roll < 40 && previous > 0) {
      return previous;
    }
    return roll < 90 ? 10 + rng.nextInt(300) : 70_000 + rng.nextInt(1000);
  }

  private static void say(FileOutputStream out, String line) throws IOException {
    out.write((line + " .\n").getBytes(StandardCharsets.UTF_8));
  }
}
