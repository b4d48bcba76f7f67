package io.dataclay.logic.metadata;

import java.util.Objects;

/**
 * A stored session: only the SHA-256 (hex) of its token is kept. {@code admin} is the account's
 * flag; {@code backendId} is set on the sessions of backends (and of the Logic Module itself),
 * null on users' sessions.
 */
public record SessionRecord(String tokenSha256, String username, String dataset, long expiresAtMs, boolean closed,
    boolean admin, String backendId) {
  /** Requires every text part but the backend ID to be present. */
  public SessionRecord {
    Objects.requireNonNull(tokenSha256, "tokenSha256");
    Objects.requireNonNull(username, "username");
    Objects.requireNonNull(dataset, "dataset");
  }

  /** Whether this is a backend's (or the Logic Module's) session rather than a user's. */
  public boolean backend() {
    return backendId != null;
  }
}
