package io.dataclay.ds.objects;

import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ForwardingStore;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.QuotaExceededException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The store with per-dataset quotas and a cap on one value's size, enforced before anything
 * reaches the engine: every write path (new objects, a call's new objects and deltas, copies,
 * replicas, versions, imports) passes here, so a refused write stores nothing.
 *
 * <p>The unit is the dataset on this backend: a dataset belongs to one account, which answers for
 * what it and the accounts it granted write access store in it; each backend counts what it holds
 * itself, so no write waits on the Logic Module. A cluster of n backends can therefore hold up to
 * n times the quota of one dataset. The counters are rebuilt from the stored headers at start.
 * Bytes are the sum of field value sizes; counting them costs a read of the object on every
 * change and removal, so that quota is off unless configured.
 */
public final class QuotaStore extends ForwardingStore {
  /** Setting names, for messages (DataServiceConfig reads them). */
  public static final String QUOTA_OBJECTS = "DATACLAY_QUOTA_OBJECTS";
  /** See {@link #QUOTA_OBJECTS}. */
  public static final String QUOTA_BYTES = "DATACLAY_QUOTA_BYTES";
  /** See {@link #QUOTA_OBJECTS}. */
  public static final String MAX_VALUE_SIZE = "DATACLAY_MAX_VALUE_SIZE";

  /** Objects and bytes one dataset may hold on this backend (0: unlimited), and the largest single value. */
  public record Limits(long objects, long bytes, long valueBytes) {}

  private static final class Usage {
    long objects;
    long bytes;
  }

  private final Limits limits;
  private final Map<String, Usage> usage = new HashMap<>();

  /** {@code inner} with {@code limits}; counts what it holds now (one pass over its headers). */
  public QuotaStore(ObjectStore inner, Limits limits) {
    super(inner);
    this.limits = limits;
    if (limits.objects() > 0 || limits.bytes() > 0) {
      inner.forEachId(id -> inner.header(id).ifPresent(h -> {
        Usage u = usage.computeIfAbsent(h.dataset(), k -> new Usage());
        u.objects++;
        if (limits.bytes() > 0) {
          u.bytes += sizeOf(id);
        }
      }));
    }
  }

  /** What dataset {@code dataset} holds here: {objects, bytes} (bytes are 0 unless a byte quota is set). */
  public synchronized long[] usageOf(String dataset) {
    Usage u = usage.get(dataset);
    return u == null ? new long[] {0, 0} : new long[] {u.objects, u.bytes};
  }

  @Override
  public void put(StoredObject object) {
    Map<String, long[]> change = charge(List.of(object));
    written(change, () -> inner.put(object));
  }

  @Override
  public void putAll(List<StoredObject> objects) {
    Map<String, long[]> change = charge(objects);
    written(change, () -> inner.putAll(objects));
  }

  @Override
  public void applyDelta(ObjectDelta delta) {
    for (Map.Entry<String, FieldValue> f : delta.changed().entrySet()) {
      checkValue(delta.id(), f.getKey(), f.getValue());
    }
    Optional<ObjectHeader> header = inner.header(delta.id());
    if (header.isEmpty() || limits.bytes() <= 0) {
      inner.applyDelta(delta); // an object not stored here fails inside (OBJECT_DOES_NOT_EXIST)
      return;
    }
    long growth = 0;
    Map<String, FieldValue> old = inner.get(delta.id()).map(StoredObject::fields).orElse(Map.of());
    for (Map.Entry<String, FieldValue> f : delta.changed().entrySet()) {
      FieldValue before = old.get(f.getKey());
      growth += f.getValue().value().length - (before == null ? 0 : before.value().length);
    }
    for (String removed : delta.removed()) {
      FieldValue before = old.get(removed);
      growth -= before == null ? 0 : before.value().length;
    }
    Map<String, long[]> change = Map.of(header.get().dataset(), new long[] {0, growth});
    reserve(change);
    written(change, () -> inner.applyDelta(delta));
  }

  @Override
  public boolean remove(UUID id) {
    if (limits.objects() <= 0 && limits.bytes() <= 0) {
      return inner.remove(id);
    }
    Optional<ObjectHeader> header = inner.header(id);
    long bytes = header.isPresent() && limits.bytes() > 0 ? sizeOf(id) : 0;
    boolean removed = inner.remove(id);
    if (removed && header.isPresent()) {
      release(Map.of(header.get().dataset(), new long[] {-1, -bytes}));
    }
    return removed;
  }

  // Checks every value, works out what each dataset gains (a replaced object gives back what it
  // held), and reserves it; throws, having reserved nothing, when a dataset would pass its quota.
  private Map<String, long[]> charge(List<StoredObject> objects) {
    for (StoredObject o : objects) {
      for (Map.Entry<String, FieldValue> f : o.fields().entrySet()) {
        checkValue(o.id(), f.getKey(), f.getValue());
      }
    }
    if (limits.objects() <= 0 && limits.bytes() <= 0) {
      return Map.of();
    }
    Map<String, long[]> change = new HashMap<>();
    for (StoredObject o : objects) {
      long[] gain = change.computeIfAbsent(o.header().dataset(), k -> new long[2]);
      Optional<ObjectHeader> before = inner.header(o.id());
      if (before.isEmpty()) {
        gain[0]++;
      } else if (!before.get().dataset().equals(o.header().dataset())) {
        gain[0]++;
        change.computeIfAbsent(before.get().dataset(), k -> new long[2])[0]--;
      }
      if (limits.bytes() > 0) {
        gain[1] += o.valueBytes();
        if (before.isPresent()) {
          change.computeIfAbsent(before.get().dataset(), k -> new long[2])[1] -= sizeOf(o.id());
        }
      }
    }
    reserve(change);
    return change;
  }

  private synchronized void reserve(Map<String, long[]> change) {
    for (Map.Entry<String, long[]> e : change.entrySet()) {
      Usage u = usage.getOrDefault(e.getKey(), new Usage());
      long[] d = e.getValue();
      if (limits.objects() > 0 && d[0] > 0 && u.objects + d[0] > limits.objects()) {
        throw new QuotaExceededException(refusal(e.getKey(), "objects", u.objects, d[0], limits.objects(),
            QUOTA_OBJECTS));
      }
      if (limits.bytes() > 0 && d[1] > 0 && u.bytes + d[1] > limits.bytes()) {
        throw new QuotaExceededException(refusal(e.getKey(), "bytes of values", u.bytes, d[1], limits.bytes(),
            QUOTA_BYTES));
      }
    }
    apply(change);
  }

  private static String refusal(String dataset, String what, long used, long more, long limit, String key) {
    return String.format("dataset '%s' holds %,d %s on this backend; %,d more would pass %s (%,d): nothing was"
        + " stored. Delete what it no longer needs (remove aliases, then collect garbage) or ask the operator to"
        + " raise the quota", dataset, used, what, more, key, limit);
  }

  private synchronized void release(Map<String, long[]> change) {
    apply(change);
  }

  private void apply(Map<String, long[]> change) {
    for (Map.Entry<String, long[]> e : change.entrySet()) {
      Usage u = usage.computeIfAbsent(e.getKey(), k -> new Usage());
      u.objects += e.getValue()[0];
      u.bytes += e.getValue()[1];
      if (u.objects <= 0 && u.bytes <= 0) {
        usage.remove(e.getKey());
      }
    }
  }

  // Runs the write; a failed write gives back what was reserved for it.
  private void written(Map<String, long[]> change, Runnable write) {
    try {
      write.run();
    } catch (RuntimeException e) {
      Map<String, long[]> back = new HashMap<>();
      change.forEach((k, v) -> back.put(k, new long[] {-v[0], -v[1]}));
      release(back);
      throw e;
    }
  }

  private void checkValue(UUID id, String field, FieldValue value) {
    if (value.value().length > limits.valueBytes()) {
      throw new InvalidArgumentException(String.format("field '%s' of object %s is %,d bytes, more than %s allows"
          + " (%,d): nothing was stored; split the value over several fields or objects", field, id,
          value.value().length, MAX_VALUE_SIZE, limits.valueBytes()));
    }
  }

  private long sizeOf(UUID id) {
    return inner.get(id).map(StoredObject::valueBytes).orElse(0L);
  }
}
