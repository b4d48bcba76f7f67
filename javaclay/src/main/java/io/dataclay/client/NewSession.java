package io.dataclay.client;

import java.util.List;

/**
 * A session the Logic Module opened (NewSession).
 *
 * @param token what every later call carries
 * @param dataset where new objects of the session go
 * @param datasets every dataset the session may read (and write, unless in {@code readOnlyDatasets})
 * @param expiresAtMs when the session ends, epoch milliseconds
 */
public record NewSession(String token, String username, String dataset, List<String> datasets,
    List<String> readOnlyDatasets, long expiresAtMs, boolean admin) {
  /** Freezes the lists. */
  public NewSession {
    datasets = List.copyOf(datasets);
    readOnlyDatasets = List.copyOf(readOnlyDatasets);
  }
}
