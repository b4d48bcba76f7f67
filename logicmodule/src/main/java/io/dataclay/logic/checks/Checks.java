package io.dataclay.logic.checks;

import io.dataclay.exceptions.InvalidArgumentException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.regex.Pattern;

/**
 * Input rules of the Logic Module. Each check returns the value when it is acceptable and
 * otherwise throws {@link InvalidArgumentException} whose message starts with the field name.
 */
public final class Checks {
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}");
  private static final Pattern ALIAS = Pattern.compile("[\\p{L}\\p{N}_.\\-:@/+=#]([\\p{L}\\p{N}_.\\-:@/+=# ]{0,254}"
      + "[\\p{L}\\p{N}_.\\-:@/+=#])?");
  private static final Pattern CLASS_NAME =
      Pattern.compile("[\\p{L}_$][\\p{L}\\p{N}_$]*([.][\\p{L}_$][\\p{L}\\p{N}_$]*)*");
  private static final Pattern IDENTIFIER = Pattern.compile("[\\p{L}_$][\\p{L}\\p{N}_$]{0,255}");
  // a DNS name (RFC 1123 labels), an IPv4 address, or an IPv6 literal with or without brackets
  private static final Pattern HOST_NAME =
      Pattern.compile("(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*");
  private static final Pattern IPV6 = Pattern.compile("\\[?[0-9A-Fa-f:.]{2,45}(?:%[A-Za-z0-9._-]{1,32})?]?");
  private static final Pattern ENGINE = Pattern.compile("[a-z0-9][a-z0-9_\\-]{0,31}");
  private static final Pattern PATH_SEGMENT = Pattern.compile("[\\p{L}\\p{N}_.\\-$+@]{1,255}");
  private static final int MAX_CLASS_NAME = 512;
  private static final int MAX_PATH = 1024;
  private static final int MAX_PASSWORD = 1024;
  /** Shortest password a new account may have, by default (DATACLAY_MIN_PASSWORD_LENGTH changes it). */
  public static final int MIN_PASSWORD = 12;
  private static volatile int minPassword = MIN_PASSWORD;
  private static final int MAX_TOKEN = 256;

  private Checks() {}

  /** An account, dataset or namespace name: 1-64 of letters, digits, '_', '.', '-', not starting with punctuation. */
  public static String name(String field, String value) {
    return matching(field, value, NAME,
        "must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit");
  }

  /** Canonical lower-case UUID text. */
  public static String uuid(String field, String value) {
    if (!isCanonicalUuid(value)) {
      throw invalid(field, "must be a canonical lower-case UUID (8-4-4-4-12 hex digits); got " + quote(value));
    }
    return value;
  }

  /** An alias: 1-256 letters, digits, spaces (not at either end) or any of _ . - : @ / + = #. */
  public static String alias(String field, String value) {
    return matching(field, value, ALIAS, "must be 1-256 letters, digits, inner spaces or any of _ . - : @ / + = #");
  }

  /** A class name: Python "module.Class" or a Java binary name, up to 512 characters. */
  public static String className(String field, String value) {
    if (value == null || value.length() > MAX_CLASS_NAME || !CLASS_NAME.matcher(value).matches()) {
      throw invalid(field, "must be a dotted class name (e.g. 'pkg.module.Class' or 'org.example.Outer$Inner')"
          + " of up to " + MAX_CLASS_NAME + " characters; got " + quote(value));
    }
    return value;
  }

  /** A field or method name. */
  public static String identifier(String field, String value) {
    return matching(field, value, IDENTIFIER, "must be an identifier of up to 256 characters");
  }

  /** Free text for humans (a type as written, a signature): no control characters, bounded length. */
  public static String text(String field, String value, int maxLength) {
    if (value == null || value.length() > maxLength || value.chars().anyMatch(Character::isISOControl)) {
      throw invalid(field, "must be at most " + maxLength + " characters without control characters");
    }
    return value;
  }

  /** A host name or IP address. */
  public static String host(String field, String value) {
    if (value == null || !(HOST_NAME.matcher(value).matches() || isIpv6Literal(value))) {
      throw invalid(field, "must be a host name or IP address; got " + quote(value));
    }
    return value;
  }

  private static boolean isIpv6Literal(String value) {
    if (!value.contains(":") || !IPV6.matcher(value).matches()
        || value.startsWith("[") != value.endsWith("]")) {
      return false;
    }
    try {
      // a literal: parsed, never looked up
      return InetAddress.getByName(value) instanceof Inet6Address;
    } catch (UnknownHostException e) {
      return false;
    }
  }

  /** A TCP port, 1-65535. */
  public static int port(String field, int value) {
    if (value < 1 || value > 65535) {
      throw invalid(field, "must be between 1 and 65535; got " + value);
    }
    return value;
  }

  /** A store engine name: lower-case letters, digits, '_' or '-'. */
  public static String engine(String field, String value) {
    return matching(field, value, ENGINE, "must be 1-32 lower-case letters, digits, '_' or '-'");
  }

  /** A password: non-empty, at most 1024 characters (its value never appears in messages). */
  public static String password(String field, String value) {
    if (value == null || value.isEmpty() || value.length() > MAX_PASSWORD) {
      throw invalid(field, "must be 1-" + MAX_PASSWORD + " characters");
    }
    return value;
  }

  /**
   * A new account's password: at least the configured length (default {@value #MIN_PASSWORD}), at most 1024
   * characters (its value never appears in messages).
   */
  public static String newPassword(String field, String value) {
    password(field, value);
    if (value.length() < minPassword) {
      throw invalid(field, "must be at least " + minPassword + " characters (DATACLAY_MIN_PASSWORD_LENGTH on the"
          + " Logic Module)");
    }
    return value;
  }

  /** Sets the shortest password new accounts may have, from the Logic Module's configuration (1-1024). */
  public static void minPasswordLength(int length) {
    if (length < 1 || length > MAX_PASSWORD) {
      throw new IllegalArgumentException("the shortest password must be 1-" + MAX_PASSWORD + " characters");
    }
    minPassword = length;
  }

  /** A session token as sent: non-empty printable ASCII of bounded length (its value never appears in messages). */
  public static String token(String field, String value) {
    if (value == null || value.isEmpty() || value.length() > MAX_TOKEN
        || value.chars().anyMatch(ch -> ch <= ' ' || ch > '~')) {
      throw invalid(field, "must be a non-empty session token");
    }
    return value;
  }

  /** A relative file path ("pkg/module.py"): '/'-separated names, no '.', '..' or empty parts. */
  public static String relativePath(String field, String value) {
    if (value == null || value.isEmpty() || value.length() > MAX_PATH) {
      throw invalid(field, "must be a relative path of 1-" + MAX_PATH + " characters; got " + quote(value));
    }
    for (String part : value.split("/", -1)) {
      if (part.equals(".") || part.equals("..") || !PATH_SEGMENT.matcher(part).matches()) {
        throw invalid(field, "must be a relative path of names made of letters, digits and _ . - $ + @"
            + " (no '.', '..', empty parts or leading '/'); got " + quote(value));
      }
    }
    return value;
  }

  /** Requires {@code value} to be non-null. */
  public static <T> T present(String field, T value) {
    if (value == null) {
      throw invalid(field, "is required");
    }
    return value;
  }

  // value, when the whole of it matches pattern; else an error saying what it must be and what came
  private static String matching(String field, String value, Pattern pattern, String must) {
    if (value == null || !pattern.matcher(value).matches()) {
      throw invalid(field, must + "; got " + quote(value));
    }
    return value;
  }

  /** An error for {@code field}, in the shape every check uses. */
  public static InvalidArgumentException invalid(String field, String problem) {
    return new InvalidArgumentException(field + ": " + problem);
  }

  /** True when {@code s} is a UUID in canonical form (lower-case, hyphenated). */
  public static boolean isCanonicalUuid(String s) {
    if (s == null || s.length() != 36) {
      return false;
    }
    for (int i = 0; i < 36; i++) {
      char ch = s.charAt(i);
      boolean dash = i == 8 || i == 13 || i == 18 || i == 23;
      if (dash ? ch != '-' : !((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) {
        return false;
      }
    }
    return true;
  }

  private static String quote(String value) {
    if (value == null) {
      return "nothing";
    }
    String shown = value.length() > 80 ? value.substring(0, 80) + "..." : value;
    return "'" + shown.replaceAll("\\p{Cntrl}", "?") + "'";
  }
}
