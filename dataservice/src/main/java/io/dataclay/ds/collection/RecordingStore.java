package io.dataclay.ds.collection;

import io.dataclay.ds.store.ForwardingStore;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import java.util.List;

/**
 * The store as the Data Service writes it: every write (new objects, replacements, copies,
 * deltas) passes its references (a version's original among them) to the {@link ReferenceRecorder}
 * before it reaches the engine, so no write path can add a reference a garbage collection does not see.
 */
final class RecordingStore extends ForwardingStore {
  private final ReferenceRecorder recorder;

  RecordingStore(ObjectStore inner, ReferenceRecorder recorder) {
    super(inner);
    this.recorder = recorder;
  }

  @Override
  public void put(StoredObject object) {
    recorder.gated(() -> recorder.record(object.header(), object.fields().values()), () -> inner.put(object));
  }

  @Override
  public void putAll(List<StoredObject> objects) {
    recorder.gated(() -> objects.forEach(o -> recorder.record(o.header(), o.fields().values())),
        () -> inner.putAll(objects));
  }

  @Override
  public void applyDelta(ObjectDelta delta) {
    recorder.gated(() -> recorder.record(null, delta.changed().values()), () -> inner.applyDelta(delta));
  }
}
