package io.dataclay.benchmarks.engines;

import io.dataclay.common.Language;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoredObject;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;

/**
 * The objects of one benchmark: a fixed list of fields with random (incompressible) values, and
 * the deltas that change one of them to another value of the same size. Value arrays are shared
 * between the objects and deltas built here; every engine copies what it is given.
 */
final class Payloads {
  /** Header of every benchmark object. */
  static final ObjectHeader HEADER = ObjectHeader.of("bench.Payload", Language.JAVA, "bench");

  private final String[] names;
  private final byte[][][] variants; // [variant][field]
  private final int changed;

  private Payloads(String[] names, int[] sizes, int changed, Random random) {
    this.names = names;
    this.changed = changed;
    this.variants = new byte[2][names.length][];
    for (int v = 0; v < 2; v++) {
      for (int f = 0; f < names.length; f++) {
        variants[v][f] = new byte[sizes[f]];
        random.nextBytes(variants[v][f]);
      }
    }
  }

  /**
   * Objects of {@code totalBytes} of values split evenly over {@code fields} fields f0..f(n-1)
   * (the last takes the remainder); deltas change f1 (f0 when there is one field).
   */
  static Payloads evenFields(int totalBytes, int fields, Random random) {
    if (fields <= 0 || totalBytes < fields) {
      throw new IllegalArgumentException("need at least one field and one byte per field, got " + fields
          + " fields for " + totalBytes + " bytes");
    }
    String[] names = new String[fields];
    int[] sizes = new int[fields];
    for (int f = 0; f < fields; f++) {
      names[f] = "f" + f;
      sizes[f] = totalBytes / fields + (f == fields - 1 ? totalBytes % fields : 0);
    }
    return new Payloads(names, sizes, Math.min(1, fields - 1), random);
  }

  /** Objects with an 8-byte field "counter" and a {@code blobBytes} field "payload"; deltas change the counter. */
  static Payloads counterAndBlob(int blobBytes, Random random) {
    return new Payloads(new String[] {"counter", "payload"}, new int[] {8, blobBytes}, 0, random);
  }

  /** A whole object with the changed field at {@code variant} (0 or 1) and the others at variant 0. */
  StoredObject object(UUID id, int variant) {
    Map<String, FieldValue> fields = new LinkedHashMap<>();
    for (int f = 0; f < names.length; f++) {
      fields.put(names[f], FieldValue.of(variants[f == changed ? variant : 0][f]));
    }
    return new StoredObject(id, HEADER, fields);
  }

  /** The delta setting the changed field of {@code id} to {@code variant} (0 or 1); nothing removed. */
  ObjectDelta delta(UUID id, int variant) {
    return new ObjectDelta(id, Map.of(names[changed], FieldValue.of(variants[variant][changed])), Set.of());
  }
}
