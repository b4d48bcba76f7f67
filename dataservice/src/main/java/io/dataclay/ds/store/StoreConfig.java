package io.dataclay.ds.store;

import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Which store engine a Data Service runs and where: the engine name, the pool directory and the
 * pool size. The Data Service reads these from its configuration and hands them over; nothing
 * here reads the environment.
 *
 * @param engine kv | memory (more engines to come: heap, 2lm, postgres)
 * @param path the pool directory; engines that keep nothing on disk ignore it and accept null
 * @param sizeBytes the pool size used when the pool is created; an existing pool keeps its size
 */
public record StoreConfig(String engine, Path path, long sizeBytes) {
  /** Checks the engine name and the size; a bad value fails here, naming it. */
  public StoreConfig {
    if (engine == null || engine.isBlank()) {
      throw new InvalidArgumentException("store engine name is missing; valid engines: " + String.join(", ", ObjectStores.ENGINES));
    }
    if (sizeBytes <= 0) {
      throw new InvalidArgumentException("store size must be positive, got " + sizeBytes + " bytes");
    }
  }

  /**
   * Parses a size such as {@code 512M}, {@code 4G}, {@code 64KiB} or {@code 1048576} (bytes);
   * suffixes K, M, G, T are powers of 1024, case-insensitive, optionally followed by B or iB.
   *
   * @throws InvalidArgumentException naming the text when it is not a positive whole size
   */
  public static long parseSize(String text) {
    if (text == null || text.isBlank()) {
      throw new InvalidArgumentException("store size is empty; expected e.g. 512M, 4G or a byte count");
    }
    String s = text.trim().toUpperCase(Locale.ROOT);
    if (s.endsWith("IB")) {
      s = s.substring(0, s.length() - 2);
    } else if (s.endsWith("B")) {
      s = s.substring(0, s.length() - 1);
    }
    int shift = 0;
    if (!s.isEmpty()) {
      switch (s.charAt(s.length() - 1)) {
        case 'K' -> shift = 10;
        case 'M' -> shift = 20;
        case 'G' -> shift = 30;
        case 'T' -> shift = 40;
        default -> shift = 0;
      }
    }
    String digits = shift == 0 ? s : s.substring(0, s.length() - 1);
    if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw new InvalidArgumentException(
          "store size '" + text + "' is not a whole number of bytes with an optional K, M, G or T suffix (e.g. 512M)");
    }
    long number;
    try {
      number = Long.parseLong(digits);
    } catch (NumberFormatException e) {
      throw new InvalidArgumentException("store size '" + text + "' is too large");
    }
    if (number == 0) {
      throw new InvalidArgumentException("store size '" + text + "' must be positive");
    }
    if (number > (Long.MAX_VALUE >> shift)) {
      throw new InvalidArgumentException("store size '" + text + "' is too large");
    }
    return number << shift;
  }
}
