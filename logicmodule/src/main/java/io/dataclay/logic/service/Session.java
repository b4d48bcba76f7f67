package io.dataclay.logic.service;

import io.dataclay.exceptions.PermissionDeniedException;
import java.util.List;
import java.util.Objects;

/**
 * An authenticated session. {@code token} is only set on the answer to NewSession (empty
 * otherwise); {@code dataset} is where its new objects go; {@code datasets} is every dataset it may use.
 */
public record Session(String token, String username, String dataset, List<String> datasets, long expiresAtMs,
    boolean admin) {
  /** Copies the dataset list; every part must be present. */
  public Session {
    Objects.requireNonNull(token, "token");
    Objects.requireNonNull(username, "username");
    Objects.requireNonNull(dataset, "dataset");
    datasets = List.copyOf(datasets);
  }

  /** True when this session may read and write objects of {@code name}. */
  public boolean mayUse(String name) {
    return datasets.contains(name);
  }

  /** Returns normally only for administrator sessions. */
  public void requireAdmin(String operation) {
    if (!admin) {
      throw new PermissionDeniedException(operation + " needs an administrator session; '" + username
          + "' is not an administrator");
    }
  }

  /** Returns normally only when this session may use {@code name}. */
  public void requireDataset(String name) {
    if (!mayUse(name)) {
      throw new PermissionDeniedException("the session of '" + username + "' has no access to dataset '"
          + name + "'");
    }
  }

  /** The same session without its token (what ValidateSession answers). */
  public Session withoutToken() {
    return new Session("", username, dataset, datasets, expiresAtMs, admin);
  }
}
