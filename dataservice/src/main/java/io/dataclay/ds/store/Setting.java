package io.dataclay.ds.store;

import java.util.Objects;

/**
 * One configuration key of the Data Service: its name, its default as written in the environment
 * ("" when it has none or the default is computed, which {@code meaning} then says), and what it
 * means. Configuration tables and the engine registry list these; {@code dataservice.jar settings}
 * and {@code engines} print them.
 *
 * @param key the environment variable, e.g. DATACLAY_STORE_SIZE
 * @param defaultValue the default as the environment would spell it, or "" (none, or computed)
 * @param meaning one sentence: what the key controls (and its default when that is computed)
 */
public record Setting(String key, String defaultValue, String meaning) {
  /** Checks that every part is given. */
  public Setting {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(defaultValue, "defaultValue");
    Objects.requireNonNull(meaning, "meaning");
  }
}
