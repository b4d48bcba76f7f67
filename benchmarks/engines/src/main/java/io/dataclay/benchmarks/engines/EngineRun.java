package io.dataclay.benchmarks.engines;

import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

/**
 * Every measurement of one engine, single-threaded: put (new objects), get (random over every
 * object put; for small objects also over the first 1,000 only, which stay in the CPU caches) and
 * update (a delta changing one of the four fields to a same-size value) at each size, each on a
 * fresh store;
 * then, on another fresh store, the update of the 8-byte field of an object that also holds a
 * 1 MiB field, against rewriting that whole object with a put.
 */
final class EngineRun {
  /** Op name of the 8-byte field update. */
  static final String COUNTER_UPDATE = "update 8 B field";
  /** Op name of the whole-object rewrite of the same change. */
  static final String COUNTER_REWRITE = "rewrite (put)";
  /** Op name of gets over a few objects only, all cache-resident. */
  static final String HOT_GET = "get (1k hot)";
  /** Size label of the counter-and-blob objects. */
  static final String COUNTER_SIZE = "1 MiB + 8 B";

  private static final int COUNTER_OBJECTS = 32;
  private static final int BLOB_BYTES = 1 << 20;

  // Read results are folded in here and published, so the JIT cannot drop the reads.
  private static volatile long consumed;

  private final StorePools pools;
  private final RoundRunner runner;
  private final List<SizeClass> sizes;
  private final double scale;
  private final long seed;

  /** A run with the settings' pools, rounds, sizes and seed. */
  EngineRun(BenchmarkSettings settings) {
    this.pools = new StorePools(settings);
    this.runner = new RoundRunner(settings.warmupRounds(), settings.rounds(), settings.roundBudgetNanos());
    this.sizes = SizeClass.standard(settings.scale());
    this.scale = settings.scale();
    this.seed = settings.seed();
  }

  /** Runs everything on {@code engine}; each store is closed and its pool removed before this returns. */
  List<Measurement> run(String engine) {
    List<Measurement> results = new ArrayList<>();
    for (SizeClass size : sizes) {
      try (StorePools.Opened opened = pools.open(engine, size.label())) {
        results.addAll(measureSize(engine, opened.store(), size));
      }
    }
    try (StorePools.Opened opened = pools.open(engine, "counter")) {
      results.addAll(measureCounterUpdate(engine, opened.store()));
    }
    return results;
  }

  private List<Measurement> measureSize(String engine, ObjectStore store, SizeClass size) {
    Random random = new Random(seed * 31 + size.bytes());
    Payloads payloads = Payloads.evenFields(size.bytes(), SizeClass.FIELDS, random);
    List<UUID> stored = new ArrayList<>();
    Measurement put = runner.measure(engine, "put", size.label(), size.putOps(), (round, ops) -> {
      StoredObject[] objects = new StoredObject[ops];
      for (int i = 0; i < ops; i++) {
        objects[i] = payloads.object(newId(random), 0);
      }
      return new RoundRunner.Round() {
        @Override
        public void run(int i) {
          store.put(objects[i]);
        }

        @Override
        public void finished(int done) {
          for (int i = 0; i < done; i++) {
            stored.add(objects[i].id());
          }
        }
      };
    });
    checkStored(engine, store, payloads.object(stored.get(random.nextInt(stored.size())), 0));
    List<Measurement> results = new ArrayList<>();
    results.add(put);
    results.add(measureGets(engine, store, size, "get", stored, random));
    if (size.hotObjects() > 0) {
      List<UUID> hot = stored.subList(0, Math.min(size.hotObjects(), stored.size()));
      results.add(measureGets(engine, store, size, HOT_GET, hot, random));
    }
    Measurement update = runner.measure(engine, "update", size.label(), size.updateOps(), (round, ops) -> {
      UUID[] ids = pick(stored, ops, random);
      ObjectDelta[] deltas = new ObjectDelta[ops];
      for (int i = 0; i < ops; i++) {
        deltas[i] = payloads.delta(ids[i], (round + 1) & 1);
      }
      return i -> store.applyDelta(deltas[i]);
    });
    results.add(update);
    return results;
  }

  private Measurement measureGets(String engine, ObjectStore store, SizeClass size, String op, List<UUID> from,
      Random random) {
    return runner.measure(engine, op, size.label(), size.getOps(), (round, ops) -> {
      UUID[] ids = pick(from, ops, random);
      return new RoundRunner.Round() {
        private long fields;

        @Override
        public void run(int i) {
          fields += read(store, ids[i]).fields().size();
        }

        @Override
        public void finished(int done) {
          consumed += fields; // published once per round: a volatile write per read would be timed too
        }
      };
    });
  }

  private List<Measurement> measureCounterUpdate(String engine, ObjectStore store) {
    Random random = new Random(seed * 31 + 8);
    Payloads payloads = Payloads.counterAndBlob(BLOB_BYTES, random);
    List<UUID> ids = new ArrayList<>();
    for (int i = 0; i < COUNTER_OBJECTS; i++) {
      UUID id = newId(random);
      store.put(payloads.object(id, 0));
      ids.add(id);
    }
    checkStored(engine, store, payloads.object(ids.get(0), 0));
    Measurement field = runner.measure(engine, COUNTER_UPDATE, COUNTER_SIZE, SizeClass.scaled(20_000, scale),
        (round, ops) -> {
          UUID[] picked = pick(ids, ops, random);
          ObjectDelta[] deltas = new ObjectDelta[ops];
          for (int i = 0; i < ops; i++) {
            deltas[i] = payloads.delta(picked[i], (round + 1) & 1);
          }
          return i -> store.applyDelta(deltas[i]);
        });
    Measurement rewrite = runner.measure(engine, COUNTER_REWRITE, COUNTER_SIZE, SizeClass.scaled(100, scale),
        (round, ops) -> {
          UUID[] picked = pick(ids, ops, random);
          StoredObject[] objects = new StoredObject[ops];
          for (int i = 0; i < ops; i++) {
            objects[i] = payloads.object(picked[i], round & 1);
          }
          return i -> store.put(objects[i]);
        });
    return List.of(field, rewrite);
  }

  private static StoredObject read(ObjectStore store, UUID id) {
    return store.get(id).orElseThrow(() -> new IllegalStateException("object " + id + " was stored but get() misses it"));
  }

  /** Fails the run when the store does not give back, field for field, what was put. */
  private static void checkStored(String engine, ObjectStore store, StoredObject expectedObject) {
    UUID id = expectedObject.id();
    StoredObject got = read(store, id);
    Map<String, FieldValue> expected = expectedObject.fields();
    boolean same = got.fields().keySet().equals(expected.keySet()) && got.header().equals(Payloads.HEADER);
    for (Map.Entry<String, FieldValue> e : expected.entrySet()) {
      same &= got.fields().containsKey(e.getKey()) && Arrays.equals(got.fields().get(e.getKey()).value(), e.getValue().value());
    }
    if (!same) {
      throw new IllegalStateException(engine + " returned object " + id + " different from what was put");
    }
  }

  private static UUID[] pick(List<UUID> from, int n, Random random) {
    if (from.isEmpty()) {
      throw new IllegalStateException("no object was stored to read or update");
    }
    UUID[] ids = new UUID[n];
    for (int i = 0; i < n; i++) {
      ids[i] = from.get(random.nextInt(from.size()));
    }
    return ids;
  }

  private static UUID newId(Random random) {
    return new UUID(random.nextLong(), random.nextLong());
  }
}
