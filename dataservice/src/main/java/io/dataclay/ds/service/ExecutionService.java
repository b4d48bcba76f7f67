package io.dataclay.ds.service;

import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.exceptions.ObjectNotHereException;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * Method calls and field accesses on stored objects: finds the object's header, checks the
 * caller may access it, and hands the work to the environment of the object's language. The
 * warm path is a store header lookup (served from the engine's memory) and a permission check.
 */
public final class ExecutionService {
  private final ObjectStore store;
  private final Environments environments;
  private final ReferenceRecorder recorder;
  private final ClassAvailability models;
  private final ReplicaSets replicas;

  /**
   * The service over a store and this backend's environments; calls wait for {@code models}' start-up
   * install, and replicated objects mastered here are served while {@code replicas} hold the lease.
   */
  public ExecutionService(ObjectStore store, Environments environments, ReferenceRecorder recorder,
      ClassAvailability models, ReplicaSets replicas) {
    this.models = models;
    this.replicas = replicas;
    this.store = store;
    this.environments = environments;
    this.recorder = recorder;
  }

  /**
   * Runs {@code kind} on object {@code id}; the future completes once the call's changes are
   * stored. Throws at once (rather than failing the future) when the object is not here, the
   * session may not access it, no environment runs its language, or this backend is still
   * installing its models after the wait.
   */
  public CompletableFuture<byte[]> execute(
      Session session, UUID id, ExecutionKind kind, String name, byte[] payload) {
    return execute(session, id, kind, name, payload, false);
  }

  /** As {@link #execute(Session, UUID, ExecutionKind, String, byte[])}; {@code nested}: made by model code in a backend. */
  public CompletableFuture<byte[]> execute(
      Session session, UUID id, ExecutionKind kind, String name, byte[] payload, boolean nested) {
    models.awaitReady(); // a (re)starting backend runs no method before its models are installed
    ObjectHeader header = store.header(id).orElseThrow(
        () -> new ObjectNotHereException("object " + id + " is not stored on this backend"));
    if (kind == ExecutionKind.SET_FIELD) {
      Permissions.checkWrite(session, id, header);
    } else {
      Permissions.check(session, id, header); // a method that changes the object is checked on its result
    }
    if (header.masterBackendId() == null) {
      replicas.requireLease(id);
    }
    recorder.used(session, id);
    ExecutionEnvironment env = environments.of(header.language());
    return env.execute(new ExecutionRequest(session, id, header.className(), kind, name, payload, nested));
  }
}
