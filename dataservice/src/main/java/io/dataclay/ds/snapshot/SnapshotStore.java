package io.dataclay.ds.snapshot;

import io.dataclay.ds.store.ForwardingStore;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The store as the Data Service writes it, for snapshots: every write (put, delta, removal) passes
 * the {@link WriteGate}, which a snapshot's freeze closes to fix a cut, and, while a snapshot's
 * export runs, keeps the state as of the cut of each object it is about to change
 * ({@link SnapshotCut#beforeWrite}). Reads go straight through. It wraps the garbage collector's
 * recording store, so every write is seen by both.
 */
public final class SnapshotStore extends ForwardingStore {
  private final WriteGate gate = new WriteGate();
  private volatile SnapshotCut cut;

  /** Gates the writes of {@code inner}. */
  public SnapshotStore(ObjectStore inner) {
    super(inner);
  }

  @Override
  public void put(StoredObject object) {
    gated(c -> c.beforeWrite(object.id(), inner), () -> inner.put(object));
  }

  @Override
  public void putAll(List<StoredObject> objects) {
    gated(c -> objects.forEach(o -> c.beforeWrite(o.id(), inner)), () -> inner.putAll(objects));
  }

  @Override
  public void applyDelta(ObjectDelta delta) {
    gated(c -> c.beforeWrite(delta.id(), inner), () -> inner.applyDelta(delta));
  }

  @Override
  public boolean remove(UUID id) {
    return gatedCall(c -> c.beforeWrite(id, inner), () -> inner.remove(id));
  }

  /** False while the gate is closed: a write may then wait, so it must not run on a network thread. */
  @Override
  public boolean writesWithoutWaiting() {
    return inner.writesWithoutWaiting() && !gate.isClosed();
  }

  /** The gate a freeze closes. */
  WriteGate gate() {
    return gate;
  }

  /** The store underneath (the exporter reads it). */
  ObjectStore inner() {
    return inner;
  }

  /** From now on, writes keep their objects' states for {@code next} (the gate is closed when this is called). */
  void begin(SnapshotCut next) {
    cut = next;
  }

  /** Writes stop keeping states for {@code ended}, if it is the current cut. */
  void end(SnapshotCut ended) {
    if (cut == ended) {
      cut = null;
    }
  }

  private void gated(Consumer<SnapshotCut> keep, Runnable write) {
    gatedCall(keep, () -> {
      write.run();
      return null;
    });
  }

  /**
   * Runs {@code write} inside the gate, after {@code keep} kept the states of the objects it writes
   * as of the current cut (only while one is open: no work on the path of ordinary writes): a freeze
   * waits for it, and an export still reads each object as it was at the cut.
   */
  private <T> T gatedCall(Consumer<SnapshotCut> keep, Supplier<T> write) {
    gate.enter();
    try {
      SnapshotCut c = cut;
      if (c != null) {
        keep.accept(c);
      }
      return write.get();
    } finally {
      gate.exit();
    }
  }
}
