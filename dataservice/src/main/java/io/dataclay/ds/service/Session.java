package io.dataclay.ds.service;

import java.util.Objects;
import java.util.Set;

/**
 * A validated session of a caller, in plain types.
 *
 * @param token the caller's token (handed to execution environments so they can act as the caller)
 * @param dataset where the session's new objects go
 * @param datasets every dataset the session may read and write
 * @param expiresAtMs epoch milliseconds after which the session is no longer valid
 */
public record Session(
    String token, String username, String dataset, Set<String> datasets, long expiresAtMs, boolean admin) {
  /** Validates and freezes the session. */
  public Session {
    Objects.requireNonNull(token, "token");
    Objects.requireNonNull(username, "username");
    Objects.requireNonNull(dataset, "dataset");
    datasets = Set.copyOf(Objects.requireNonNull(datasets, "datasets"));
  }

  /** Whether this session may read and write objects of {@code objectDataset}. */
  public boolean mayAccess(String objectDataset) {
    return datasets.contains(objectDataset);
  }
}
