package io.dataclay.logic.metadata;

import java.util.Objects;

/** A stored account: its PBKDF2-HMAC-SHA256 password hash (base64), salt (base64) and iterations. */
public record AccountRecord(String username, String passwordHash, String passwordSalt, int passwordIterations,
    boolean admin) {
  /** Requires every text part to be present. */
  public AccountRecord {
    Objects.requireNonNull(username, "username");
    Objects.requireNonNull(passwordHash, "passwordHash");
    Objects.requireNonNull(passwordSalt, "passwordSalt");
  }
}
