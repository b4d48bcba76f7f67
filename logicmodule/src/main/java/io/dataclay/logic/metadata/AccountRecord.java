package io.dataclay.logic.metadata;

import java.util.Objects;

/**
 * A stored account: its PBKDF2-HMAC-SHA256 password hash (base64), salt (base64) and iterations,
 * whether it is an administrator, and whether an administrator let it register models.
 */
public record AccountRecord(String username, String passwordHash, String passwordSalt, int passwordIterations,
    boolean admin, boolean mayRegisterModels) {
  /** Requires every text part to be present. */
  public AccountRecord {
    Objects.requireNonNull(username, "username");
    Objects.requireNonNull(passwordHash, "passwordHash");
    Objects.requireNonNull(passwordSalt, "passwordSalt");
  }

  /** An account without the model registration right (administrators have it anyway). */
  public AccountRecord(String username, String passwordHash, String passwordSalt, int passwordIterations,
      boolean admin) {
    this(username, passwordHash, passwordSalt, passwordIterations, admin, false);
  }
}
