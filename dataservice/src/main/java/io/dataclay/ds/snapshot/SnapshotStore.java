package io.dataclay.ds.snapshot;

import io.dataclay.ds.store.ForwardingStore;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import java.util.List;
import java.util.UUID;

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
    gate.enter();
    try {
      keep(object.id());
      inner.put(object);
    } finally {
      gate.exit();
    }
  }

  @Override
  public void putAll(List<StoredObject> objects) {
    gate.enter();
    try {
      SnapshotCut c = cut;
      if (c != null) {
        objects.forEach(o -> c.beforeWrite(o.id(), inner));
      }
      inner.putAll(objects);
    } finally {
      gate.exit();
    }
  }

  @Override
  public void applyDelta(ObjectDelta delta) {
    gate.enter();
    try {
      keep(delta.id());
      inner.applyDelta(delta);
    } finally {
      gate.exit();
    }
  }

  @Override
  public boolean remove(UUID id) {
    gate.enter();
    try {
      keep(id);
      return inner.remove(id);
    } finally {
      gate.exit();
    }
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

  private void keep(UUID id) {
    SnapshotCut c = cut;
    if (c != null) {
      c.beforeWrite(id, inner);
    }
  }
}
