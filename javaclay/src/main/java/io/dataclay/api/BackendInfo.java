package io.dataclay.api;

import io.dataclay.common.Language;
import java.util.List;
import java.util.UUID;

/**
 * A Data Service backend as the Logic Module knows it.
 *
 * @param languages the execution environments it runs
 * @param alive whether its heartbeat was seen recently
 */
public record BackendInfo(UUID id, String name, String host, int port, List<Language> languages, boolean alive) {
  /** Freezes the language list. */
  public BackendInfo {
    languages = List.copyOf(languages);
  }
}
