package io.dataclay.logic.backends;

import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.ImportTables;
import java.util.List;
import java.util.function.Consumer;

/**
 * The calls snapshots and imports make to backends (docs/internals.md "Snapshots"), in the Logic
 * Module's session {@code token}; each raises what the backend answered.
 */
public interface SnapshotCalls {
  /** What a backend stored when its gate closed. */
  record Frozen(long objects, long bytes) {}

  /** Closes the backend's write gate for snapshot {@code snapshotId} until thawed or {@code holdMs} passed. */
  Frozen freeze(BackendRecord backend, String snapshotId, long holdMs, String dataset, String token);

  /** Opens the backend's write gate. */
  void thaw(BackendRecord backend, String snapshotId, String token);

  /** Ends the snapshot on the backend: it keeps no more states for it. */
  void endSnapshot(BackendRecord backend, String snapshotId, String token);

  /** Hands the copies the backend staged for import {@code importId} to {@code sink}, batch by batch. */
  void prepareImport(BackendRecord backend, String importId, String token,
      Consumer<List<ImportTables.StagedCopy>> sink);

  /** Tells the backend how import {@code importId} ended. */
  void finishImport(BackendRecord backend, String importId, boolean committed, String token);
}
