package io.dataclay.ds.status;

import io.dataclay.ds.environments.EnvironmentStatus;
import io.dataclay.ds.store.StoreStats;
import java.util.List;
import java.util.Map;

/** What GetStatus answers: identity, store use, environments and per-RPC call counts. */
public record BackendReport(
    BackendIdentity backend, StoreStats store, List<EnvironmentStatus> environments, Map<String, Long> calls) {}
