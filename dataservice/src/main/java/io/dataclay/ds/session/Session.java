package io.dataclay.ds.session;

import java.util.Objects;
import java.util.Set;

/**
 * A validated session of a caller, in plain types.
 *
 * @param token the caller's token (handed to execution environments so they can act as the caller)
 * @param dataset where the session's new objects go
 * @param datasets every dataset the session may read
 * @param readOnlyDatasets those of {@code datasets} it may not change (read-only data contracts)
 * @param expiresAtMs epoch milliseconds after which the session is no longer valid
 * @param backend a backend's (or the Logic Module's) session: the cluster itself, not a user
 * @param accessChangesAtMs when a contract of the session begins or ends by itself (0: never)
 * @param backendId a backend session's backend ID, as the Logic Module vouches for it ({@link
 *     #LOGIC_MODULE} for the Logic Module's own); empty for users
 */
public record Session(String token, String username, String dataset, Set<String> datasets,
    Set<String> readOnlyDatasets, long expiresAtMs, boolean admin, boolean backend, long accessChangesAtMs,
    String backendId) {
  /** The backend ID of the Logic Module's own session. */
  public static final String LOGIC_MODULE = "logic-module";

  /** Validates and freezes the session. */
  public Session {
    Objects.requireNonNull(token, "token");
    Objects.requireNonNull(username, "username");
    Objects.requireNonNull(dataset, "dataset");
    datasets = Set.copyOf(Objects.requireNonNull(datasets, "datasets"));
    readOnlyDatasets = Set.copyOf(Objects.requireNonNull(readOnlyDatasets, "readOnlyDatasets"));
    backendId = backendId == null ? "" : backendId;
  }

  /** A session without a backend ID. */
  public Session(String token, String username, String dataset, Set<String> datasets, Set<String> readOnlyDatasets,
      long expiresAtMs, boolean admin, boolean backend, long accessChangesAtMs) {
    this(token, username, dataset, datasets, readOnlyDatasets, expiresAtMs, admin, backend, accessChangesAtMs, "");
  }

  /** A user's session with read-write access to every dataset listed. */
  public Session(String token, String username, String dataset, Set<String> datasets, long expiresAtMs,
      boolean admin) {
    this(token, username, dataset, datasets, Set.of(), expiresAtMs, admin, false, 0, "");
  }

  /** Whether this is the Logic Module's own session. */
  public boolean isLogicModule() {
    return backend && LOGIC_MODULE.equals(backendId);
  }

  /** Whether this session may read objects of {@code objectDataset} (backends: every dataset). */
  public boolean mayAccess(String objectDataset) {
    return backend || datasets.contains(objectDataset);
  }

  /** Whether this session may change objects of {@code objectDataset} (backends: every dataset). */
  public boolean mayWrite(String objectDataset) {
    return backend || (datasets.contains(objectDataset) && !readOnlyDatasets.contains(objectDataset));
  }
}
