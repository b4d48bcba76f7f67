package io.dataclay.logic.backends;

import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.ModelRecord;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What the Logic Module asks of backends: installing and removing models, forgetting closed
 * sessions, the steps of a garbage collection, snapshots and promotions.
 */
public interface BackendCalls extends AutoCloseable {
  /**
   * Sends {@code model} to each backend, calling with {@code token}, and waits up to {@code wait}
   * until every one has installed it. Never throws: returns the backends that did not confirm
   * (down, refused, or slower than {@code wait}); a backend fetches a model it missed from
   * ListModels, when it registers or when it meets a class it does not know.
   */
  List<BackendRecord> deploy(List<BackendRecord> backends, ModelRecord model, String token, Duration wait);

  /**
   * Tells each backend that these models were removed (change {@code revision}), calling with
   * {@code token}, and waits up to {@code wait} for them. Never throws: returns the backends that
   * did not confirm; they learn of it at their next heartbeat.
   */
  List<BackendRecord> removeModels(List<BackendRecord> backends, List<String> namespaces, long revision, String token,
      Duration wait);

  /**
   * Tells each backend to stop trusting the sessions with these token hashes (or, with
   * {@code forgetAll}, every session it cached); waits up to {@code wait} for their answers. Never
   * throws: a backend that misses it hears of it at its next heartbeat.
   */
  void sessionsClosed(List<BackendRecord> backends, List<String> tokenSha256, boolean forgetAll, String token,
      Duration wait);

  /** Receives one stored object's ID and the IDs it references. */
  @FunctionalInterface
  interface ReferenceSink {
    void accept(String id, List<String> references);
  }

  /**
   * Starts garbage collection {@code collectionId} on a backend: from now on it records objects
   * that become referenced or held.
   *
   * @throws io.dataclay.exceptions.DataClayException when the backend does not answer or refuses
   */
  void beginCollection(BackendRecord backend, long collectionId, String token);

  /**
   * Hands the outgoing references of every object stored on a backend to {@code sink}, in the
   * order they arrive; returns when the backend has sent them all.
   *
   * @throws io.dataclay.exceptions.DataClayException when the backend does not answer or refuses
   */
  void getReferences(BackendRecord backend, long collectionId, String token, ReferenceSink sink);

  /**
   * Ends collection {@code collectionId} on a backend: what it recorded since it began, and what
   * every session holds there.
   *
   * @throws io.dataclay.exceptions.DataClayException when the backend does not answer or refuses
   */
  RecordedRoots endCollection(BackendRecord backend, long collectionId, String token);

  /**
   * Removes objects from a backend (collected garbage).
   *
   * @throws io.dataclay.exceptions.DataClayException when the backend does not answer or refuses
   */
  void deleteObjects(BackendRecord backend, List<String> ids, String token);

  /** The calls of snapshots and imports; implementations that cannot make them say so. */
  default SnapshotCalls snapshots() {
    throw new UnsupportedOperationException("these backend calls cannot take snapshots");
  }

  /**
   * Tells backend {@code b} every backend's term, then makes its replicas of objects their master
   * copies ({@code replicas}: object ID to its other replicas' backends, which follow the new
   * master; empty: only the terms).
   *
   * @throws io.dataclay.exceptions.DataClayException when the backend does not answer or refuses
   */
  void promoteReplicas(BackendRecord b, Map<String, List<String>> replicas, Map<String, Long> terms, String token);

  /**
   * Asks {@code master}, the backend holding the master copies of {@code ids}, for replicas of them
   * on {@code target}.
   *
   * @throws io.dataclay.exceptions.DataClayException when the backend does not answer or refuses
   */
  void newReplicas(BackendRecord master, List<String> ids, String target, String token);

  /** Stops sending; deployments still queued are dropped. */
  @Override
  void close();
}
