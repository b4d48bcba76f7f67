package io.dataclay.api;

import java.util.Objects;

/**
 * A dataset as listed by {@link DataClay#listDatasets()}.
 *
 * @param access what the session may do with its objects
 * @param contractExpiresAtMs when the session's data contract on it ends (epoch ms; 0: never, or no contract)
 * @param objects how many objects it holds; -1 when not counted
 */
public record DatasetInfo(String name, String owner, Access access, long contractExpiresAtMs, long objects) {
  /** What a session may do with a dataset's objects. */
  public enum Access {
    /** Nothing: an administrator sees every dataset listed. */
    NONE,
    /** The session's account owns it. */
    OWNER,
    /** A read-write data contract in force. */
    READ_WRITE,
    /** A read-only data contract in force. */
    READ_ONLY
  }

  /** Requires the name, owner and access. */
  public DatasetInfo {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(access, "access");
  }
}
