package io.dataclay.common;

import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The secret a cluster's servers share (a file only its owner may read, written by `dataclay
 * start` or by the operator): a backend proves it knows it to the Logic Module with an HMAC, so the
 * secret itself never crosses the network and no user's password sits in a backend's environment.
 */
public final class ClusterSecret {
  /** Fewest characters a secret file may hold: 32 bytes of entropy as hex or base64 need more. */
  public static final int MIN_LENGTH = 32;
  private static final String PURPOSE = "dataclay-backend-session";

  private final byte[] key;

  private ClusterSecret(byte[] key) {
    this.key = key;
  }

  /** A secret from its text (tests; servers read files). */
  public static ClusterSecret of(String text) {
    String trimmed = text == null ? "" : text.strip();
    if (trimmed.length() < MIN_LENGTH) {
      throw new InvalidArgumentException("the cluster secret must be at least " + MIN_LENGTH + " characters");
    }
    return new ClusterSecret(trimmed.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Reads the secret file named by configuration key {@code key}.
   *
   * @throws InvalidArgumentException naming the file and what is wrong with it: missing, not a
   *     regular file, readable or writable by group or others, or too short
   */
  public static ClusterSecret read(String key, Path file) {
    if (file == null) {
      throw new InvalidArgumentException(key + " is not set: it names the cluster secret file (mode 0600) that"
          + " `dataclay start` writes, or one you made with 32+ random characters");
    }
    String text = OwnerOnlyFile.read(key, file);
    try {
      return of(text);
    } catch (InvalidArgumentException e) {
      throw new InvalidArgumentException(key + ": " + file + ": " + e.getMessage());
    }
  }

  /** The proof a backend sends to open a session: HMAC-SHA256 over its ID, the time and a nonce. */
  public byte[] proof(String backendId, long issuedAtMs, String nonce) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      String message = PURPOSE + "\n" + backendId + "\n" + issuedAtMs + "\n" + nonce;
      return mac.doFinal(message.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
    }
  }

  /** Whether {@code proof} is the proof of these values (compared in constant time). */
  public boolean verifies(String backendId, long issuedAtMs, String nonce, byte[] proof) {
    return proof != null && MessageDigest.isEqual(proof(backendId, issuedAtMs, nonce), proof);
  }

  @Override
  public String toString() {
    return "ClusterSecret[hidden]";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ClusterSecret other && MessageDigest.isEqual(key, other.key);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(key);
  }
}
