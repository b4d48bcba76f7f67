package io.dataclay.ds.store.crypt;

import io.dataclay.ds.store.StoreConfig;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Set;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The 256-bit key that encrypts a store's field values, read from its key file, and the keys
 * derived from it (HMAC-SHA256 with fixed labels, so the file's key itself is used for nothing
 * else): one that derives the AES keys of {@link FieldCipher}, one for the key check a pool records.
 *
 * <p>Key file: 32 raw bytes, or their text as 64 hexadecimal digits or as base64 (44 characters),
 * surrounding white space ignored; e.g. {@code head -c 32 /dev/urandom > key} or
 * {@code openssl rand -base64 32 > key}, then {@code chmod 600 key}. A file that group or others
 * may read or write is refused.
 *
 * <p>Key check: {@code v1 <salt> <mac>}, base64, where mac = HMAC(check key, salt) for a random
 * 16-byte salt. It tells whether a key is the pool's without revealing anything about the key.
 */
public final class StoreKey {
  /** Bytes of a key. */
  public static final int KEY_BYTES = 32;

  private static final int MAX_FILE_BYTES = 1024;
  private static final int SALT_BYTES = 16;
  private static final String CHECK_VERSION = "v1";
  private static final String HMAC = "HmacSHA256";
  private static final byte[] ENCRYPTION_LABEL = "dataclay store v1: field value encryption".getBytes(StandardCharsets.UTF_8);
  private static final byte[] CHECK_LABEL = "dataclay store v1: key check".getBytes(StandardCharsets.UTF_8);
  private static final Set<PosixFilePermission> OWNER_ONLY =
      EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);
  private static final SecureRandom RANDOM = new SecureRandom();

  private final String source;
  private final SecretKeySpec derivationKey;
  private final SecretKeySpec checkKey;

  private StoreKey(String source, byte[] key) {
    this.source = source;
    this.derivationKey = new SecretKeySpec(hmac(new SecretKeySpec(key, HMAC), ENCRYPTION_LABEL), HMAC);
    this.checkKey = new SecretKeySpec(hmac(new SecretKeySpec(key, HMAC), CHECK_LABEL), HMAC);
  }

  /**
   * Reads the key in {@code file}.
   *
   * @throws InvalidArgumentException naming the file when it is missing, not a regular file,
   *     readable or writable by group or others, or does not hold a 256-bit key in a known form
   */
  public static StoreKey read(Path file) {
    PosixFileAttributes attributes;
    try {
      attributes = Files.readAttributes(file, PosixFileAttributes.class);
    } catch (NoSuchFileException e) {
      throw new InvalidArgumentException("store key file " + file + " does not exist");
    } catch (IOException | UnsupportedOperationException e) {
      throw new InvalidArgumentException("cannot read store key file " + file + ": " + e.getMessage());
    }
    if (!attributes.isRegularFile()) {
      throw new InvalidArgumentException("store key file " + file + " is not a regular file");
    }
    if (!OWNER_ONLY.containsAll(attributes.permissions())) {
      throw new InvalidArgumentException("store key file " + file + " may be read or written by group or others (mode "
          + PosixFilePermissions.toString(attributes.permissions()) + "); refusing a key others can read: chmod 600 " + file);
    }
    byte[] content = readSmall(file);
    try {
      byte[] key = parse(content);
      if (key == null) {
        throw new InvalidArgumentException("store key file " + file + " does not hold a 256-bit key: expected 32 raw bytes,"
            + " or 64 hexadecimal digits, or the base64 of 32 bytes (e.g. head -c 32 /dev/urandom > " + file + ")");
      }
      try {
        return new StoreKey(file.toString(), key);
      } finally {
        Arrays.fill(key, (byte) 0);
      }
    } finally {
      Arrays.fill(content, (byte) 0);
    }
  }

  /** The key {@code config} names, read and checked now, or null when it names none (no encryption). */
  public static StoreKey forStore(StoreConfig config) {
    return config.keyFile() == null ? null : read(config.keyFile());
  }

  /** A key given as bytes (tests and tools); {@code source} names it in messages. */
  public static StoreKey of(byte[] key, String source) {
    if (key == null || key.length != KEY_BYTES) {
      throw new InvalidArgumentException("a store key has " + KEY_BYTES + " bytes, not " + (key == null ? 0 : key.length));
    }
    return new StoreKey(source, key);
  }

  /** Where the key came from (its file), for messages; never the key. */
  public String source() {
    return source;
  }

  /** A fresh key check of this key, for a new pool to record. */
  public String newCheck() {
    byte[] salt = new byte[SALT_BYTES];
    RANDOM.nextBytes(salt);
    Base64.Encoder b64 = Base64.getEncoder();
    return CHECK_VERSION + " " + b64.encodeToString(salt) + " " + b64.encodeToString(hmac(checkKey, salt));
  }

  /**
   * Whether {@code check} (made by {@link #newCheck}, maybe with another key) is of this key.
   *
   * @throws InvalidArgumentException when {@code check} is not a key check this build reads
   */
  public boolean matches(String check) {
    String[] parts = check == null ? new String[0] : check.trim().split(" ");
    if (parts.length != 3 || !parts[0].equals(CHECK_VERSION)) {
      throw new InvalidArgumentException("the recorded key check '" + check + "' is not one this build reads ("
          + CHECK_VERSION + " <salt> <mac>)");
    }
    try {
      byte[] salt = Base64.getDecoder().decode(parts[1]);
      byte[] mac = Base64.getDecoder().decode(parts[2]);
      return MessageDigest.isEqual(mac, hmac(checkKey, salt));
    } catch (IllegalArgumentException e) {
      throw new InvalidArgumentException("the recorded key check '" + check + "' is not valid base64");
    }
  }

  /** 32 bytes derived from the key for {@code label} (the AES keys of {@link FieldCipher}). */
  byte[] derive(byte[] label) {
    return hmac(derivationKey, label);
  }

  @Override
  public String toString() {
    return "StoreKey[" + source + "]";
  }

  private static byte[] readSmall(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      byte[] content = in.readNBytes(MAX_FILE_BYTES + 1);
      if (content.length > MAX_FILE_BYTES) {
        throw new InvalidArgumentException("store key file " + file + " is larger than " + MAX_FILE_BYTES
            + " bytes; a key file holds one 256-bit key");
      }
      return content;
    } catch (IOException e) {
      throw new InvalidArgumentException("cannot read store key file " + file + ": " + e.getMessage());
    }
  }

  /** The key in a key file's content, or null when it holds none in a known form. */
  static byte[] parse(byte[] content) {
    if (content.length == KEY_BYTES) {
      return content.clone();
    }
    String text = new String(content, StandardCharsets.US_ASCII).strip();
    if (text.length() == 2 * KEY_BYTES) {
      try {
        return HexFormat.of().parseHex(text);
      } catch (IllegalArgumentException e) {
        // not hex; maybe base64 below
      }
    }
    try {
      byte[] decoded = Base64.getDecoder().decode(text);
      if (decoded.length == KEY_BYTES) {
        return decoded;
      }
      Arrays.fill(decoded, (byte) 0);
    } catch (IllegalArgumentException e) {
      // neither form
    }
    return null;
  }

  private static byte[] hmac(SecretKeySpec key, byte[] data) {
    try {
      Mac mac = Mac.getInstance(HMAC);
      mac.init(key);
      return mac.doFinal(data);
    } catch (GeneralSecurityException e) {
      throw new InternalException("this JVM cannot compute " + HMAC + ": " + e.getMessage());
    }
  }
}
