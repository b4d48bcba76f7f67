package io.dataclay.serialization;

import io.dataclay.exceptions.InvalidArgumentException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Class names a deployment adds to the safe types (DATACLAY_JAVA_ALLOW): exact binary names
 * ("com.example.Point") or whole packages ("com.example.values.*").
 */
public final class AllowList {
  private static final Pattern ENTRY =
      Pattern.compile("[\\p{L}_$][\\p{L}\\p{N}_$]*(\\.[\\p{L}_$][\\p{L}\\p{N}_$]*)*(\\.\\*)?");
  private static final AllowList NONE = new AllowList(List.of(), List.of());

  private final List<String> names;
  private final List<String> packages;

  private AllowList(List<String> names, List<String> packages) {
    this.names = List.copyOf(names);
    this.packages = List.copyOf(packages);
  }

  /** Allows nothing beyond the safe types. */
  public static AllowList none() {
    return NONE;
  }

  /**
   * Parses a comma-separated list; {@code key} names the setting in errors.
   *
   * @throws InvalidArgumentException naming the entry that is not a class name or package.*
   */
  public static AllowList parse(String text, String key) {
    if (text == null || text.isBlank()) {
      return NONE;
    }
    List<String> names = new ArrayList<>();
    List<String> packages = new ArrayList<>();
    for (String raw : text.split(",")) {
      String entry = raw.trim();
      if (entry.isEmpty()) {
        continue;
      }
      if (!ENTRY.matcher(entry).matches()) {
        throw new InvalidArgumentException(key + " entries must be class names or package.*, not '" + entry + "'");
      }
      if (entry.endsWith(".*")) {
        packages.add(entry.substring(0, entry.length() - 1));
      } else {
        names.add(entry);
      }
    }
    return new AllowList(names, packages);
  }

  /** Whether the binary class name is listed (by name or package). */
  public boolean allows(String className) {
    if (names.contains(className)) {
      return true;
    }
    for (String p : packages) {
      if (className.startsWith(p) && className.indexOf('.', p.length()) < 0) {
        return true;
      }
    }
    return false;
  }
}
