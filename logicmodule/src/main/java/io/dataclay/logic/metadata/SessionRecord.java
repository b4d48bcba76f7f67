package io.dataclay.logic.metadata;

import java.util.Objects;

/** A stored session: only the SHA-256 (hex) of its token is kept. {@code admin} is the account's flag. */
public record SessionRecord(String tokenSha256, String username, String dataset, long expiresAtMs, boolean closed,
    boolean admin) {
  /** Requires every text part to be present. */
  public SessionRecord {
    Objects.requireNonNull(tokenSha256, "tokenSha256");
    Objects.requireNonNull(username, "username");
    Objects.requireNonNull(dataset, "dataset");
  }
}
