package io.dataclay.logic.accounts;

import io.dataclay.exceptions.PermissionDeniedException;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * An authenticated session. {@code token} is only set on the answer to NewSession (empty
 * otherwise); {@code dataset} is where its new objects go; {@code datasets} is every dataset it may
 * read, and {@code readOnlyDatasets} those of them it may not change. {@code backendId} is set on
 * the sessions of backends (and of the Logic Module itself): they are the cluster, not a user.
 * {@code accessChangesAtMs} is when a contract of this session starts or ends by itself (0: never).
 */
public record CallerSession(String token, String username, String dataset, List<String> datasets,
    Set<String> readOnlyDatasets, long expiresAtMs, boolean admin, String backendId, long accessChangesAtMs) {
  /** Copies the dataset lists; every part but the backend ID must be present. */
  public CallerSession {
    Objects.requireNonNull(token, "token");
    Objects.requireNonNull(username, "username");
    Objects.requireNonNull(dataset, "dataset");
    datasets = List.copyOf(datasets);
    readOnlyDatasets = Set.copyOf(readOnlyDatasets);
  }

  /** A user's session with read-write access to every dataset listed (tests and simple callers). */
  public CallerSession(String token, String username, String dataset, List<String> datasets, long expiresAtMs,
      boolean admin) {
    this(token, username, dataset, datasets, Set.of(), expiresAtMs, admin, null, 0);
  }

  /** Whether this is a backend's (or the Logic Module's) session. */
  public boolean backend() {
    return backendId != null;
  }

  /** True when this session may read objects of {@code name} (backends: every dataset). */
  public boolean mayUse(String name) {
    return backend() || datasets.contains(name);
  }

  /** True when this session may change objects of {@code name} (backends: every dataset). */
  public boolean mayWrite(String name) {
    return backend() || (datasets.contains(name) && !readOnlyDatasets.contains(name));
  }

  /** Returns normally only for administrator sessions. */
  public void requireAdmin(String operation) {
    if (!admin) {
      throw new PermissionDeniedException(operation + " needs an administrator session; '" + username
          + "' is not an administrator");
    }
  }

  /** Returns normally only for the sessions of backends (and of the Logic Module). */
  public void requireBackend(String operation) {
    if (!backend()) {
      throw new PermissionDeniedException(operation + " is for the cluster's backends only; '" + username
          + "' is a user");
    }
  }

  /** Returns normally only when this session may read {@code name}. */
  public void requireDataset(String name) {
    if (!mayUse(name)) {
      throw new PermissionDeniedException("the session of '" + username + "' has no access to dataset '"
          + name + "'");
    }
  }

  /** Returns normally only when this session may change objects (and aliases) of {@code name}. */
  public void requireWritable(String name) {
    requireDataset(name);
    if (!mayWrite(name)) {
      throw new PermissionDeniedException("the session of '" + username + "' may only read dataset '" + name
          + "' (a read-only data contract)");
    }
  }

  /** The same session without its token (what ValidateSession answers). */
  public CallerSession withoutToken() {
    return new CallerSession("", username, dataset, datasets, readOnlyDatasets, expiresAtMs, admin, backendId,
        accessChangesAtMs);
  }
}
