package io.dataclay.logic.backends;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a backend recorded during a collection (its EndCollection answer): objects that became
 * referenced since BeginCollection, and every session's held objects by session token.
 */
public record RecordedRoots(List<String> referenced, Map<String, List<String>> heldBySession) {
  /** Copies both parts. */
  public RecordedRoots {
    referenced = List.copyOf(Objects.requireNonNull(referenced, "referenced"));
    heldBySession = Map.copyOf(Objects.requireNonNull(heldBySession, "heldBySession"));
  }
}
