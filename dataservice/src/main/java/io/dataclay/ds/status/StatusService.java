package io.dataclay.ds.status;

import io.dataclay.ds.environments.Environments;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.server.CallCounters;
import java.util.Objects;

/** Reports this backend's identity, store use, environments and call counters. */
public final class StatusService {
  private final ObjectStore store;
  private final Environments environments;
  private final CallCounters counters;
  private volatile BackendIdentity identity;

  /** A status over the given parts; the identity is set once the server is bound. */
  public StatusService(ObjectStore store, Environments environments, CallCounters counters, BackendIdentity identity) {
    this.store = store;
    this.environments = environments;
    this.counters = counters;
    this.identity = Objects.requireNonNull(identity, "identity");
  }

  /** Replaces the identity (the bound port is known after start). */
  public void identify(BackendIdentity identity) {
    this.identity = Objects.requireNonNull(identity, "identity");
  }

  /** This backend's identity. */
  public BackendIdentity identity() {
    return identity;
  }

  /** A snapshot of the backend's state. */
  public BackendReport report() {
    return new BackendReport(identity, store.stats(), environments.statuses(), counters.snapshot());
  }
}
