package io.dataclay.logic.accounts;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/** Session tokens: 256 random bits as URL-safe base64; only their SHA-256 is ever stored. */
final class SessionTokens {
  private static final SecureRandom RANDOM = new SecureRandom();

  private SessionTokens() {}

  /** A fresh unguessable token. */
  static String newToken() {
    byte[] bits = new byte[32];
    RANDOM.nextBytes(bits);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bits);
  }

  /** The SHA-256 of a token, in lower-case hex: the key sessions are stored under. */
  static String sha256(String token) {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(digest.digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is not available in this JVM", e);
    }
  }
}
