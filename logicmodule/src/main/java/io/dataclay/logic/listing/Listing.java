package io.dataclay.logic.listing;

import java.util.List;
import java.util.Objects;

/** The plain types of listing answers. */
public final class Listing {
  private Listing() {}

  /** One page of a listing; {@code nextPageToken} is empty when the listing is complete. */
  public record Page<T>(List<T> items, String nextPageToken) {
    /** Copies the items. */
    public Page {
      items = List.copyOf(items);
      Objects.requireNonNull(nextPageToken, "nextPageToken");
    }
  }

  /** What a session may do with a dataset's objects. */
  public enum Access {
    /** Nothing: an administrator sees the dataset listed, no more. */
    NONE,
    /** It owns the dataset. */
    OWNER,
    /** A read-write data contract in force. */
    READ_WRITE,
    /** A read-only data contract in force. */
    READ_ONLY
  }

  /**
   * A dataset as its listing shows it: {@code contractExpiresAtMs} is the end of the caller's
   * contract on it (0: no end, or no contract); {@code objects} is -1 when not counted.
   */
  public record Dataset(String name, String owner, Access access, long contractExpiresAtMs, long objects) {
    /** Requires the name, owner and access. */
    public Dataset {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(owner, "owner");
      Objects.requireNonNull(access, "access");
    }
  }
}
