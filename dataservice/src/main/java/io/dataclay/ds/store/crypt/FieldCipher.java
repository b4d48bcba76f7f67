package io.dataclay.ds.store.crypt;

import io.dataclay.exceptions.InternalException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Encrypts and authenticates one field value with AES-256-GCM (the JDK's), bound to the object ID
 * and field name it belongs to (the additional authenticated data), so a value cannot be read
 * without the key, changed unnoticed, or moved to another object or field. Thread-safe.
 *
 * <p>Nonces never repeat under one AES key: each cipher instance (one per store opened) draws a
 * random 64-bit epoch, encrypts under an AES key derived from the store key and that epoch, and
 * numbers its encryptions with a counter. So a pool may take any number of writes over its life
 * (random 96-bit nonces under one key would be safe for about 2^32 only), and a crash cannot
 * reuse a nonce: the next process has another epoch, hence another key.
 *
 * <pre>
 * sealed value: byte format (1), 8 bytes epoch, 12 bytes nonce (4 random bytes of the epoch,
 *               8-byte counter), ciphertext (as long as the value), 16 bytes GCM tag
 * AAD:          byte format, 16 bytes object ID, UTF-8 field name
 * </pre>
 */
public final class FieldCipher {
  /** Bytes a sealed value has beyond its plaintext. */
  public static final int OVERHEAD = 1 + 8 + 12 + 16;

  private static final byte FORMAT = 1;
  private static final int EPOCH_AT = 1;
  private static final int NONCE_AT = 9;
  private static final int NONCE_BYTES = 12;
  private static final int DATA_AT = NONCE_AT + NONCE_BYTES;
  private static final int TAG_BITS = 128;
  private static final byte[] EPOCH_LABEL = "epoch".getBytes(StandardCharsets.UTF_8);
  private static final SecureRandom RANDOM = new SecureRandom();
  /** Epoch keys kept for reading; a pool written by more processes derives the rest on each read. */
  private static final int MAX_READ_KEYS = 4096;
  private static final ThreadLocal<Cipher> CIPHERS = ThreadLocal.withInitial(FieldCipher::newCipher);

  private final StoreKey key;
  private final long epoch;
  private final int noncePrefix;
  private final SecretKeySpec epochKey;
  private final AtomicLong counter = new AtomicLong();
  // AES keys of the epochs met while reading: one per process that wrote to the pool.
  private final ConcurrentHashMap<Long, SecretKeySpec> readKeys = new ConcurrentHashMap<>();

  /** A cipher for values of the store whose key is {@code key}, writing under a fresh epoch. */
  public FieldCipher(StoreKey key) {
    this.key = key;
    this.epoch = RANDOM.nextLong();
    this.noncePrefix = RANDOM.nextInt();
    this.epochKey = aesKey(epoch);
    readKeys.put(epoch, epochKey);
  }

  /** The sealed form of {@code value}, the value of field {@code field} of object {@code id}. */
  public byte[] seal(UUID id, String field, byte[] value) {
    byte[] out = new byte[OVERHEAD + value.length];
    ByteBuffer header = ByteBuffer.wrap(out);
    header.put(FORMAT).putLong(epoch).putInt(noncePrefix).putLong(counter.incrementAndGet());
    try {
      Cipher cipher = CIPHERS.get();
      cipher.init(Cipher.ENCRYPT_MODE, epochKey, new GCMParameterSpec(TAG_BITS, out, NONCE_AT, NONCE_BYTES));
      cipher.updateAAD(aad(id, field));
      cipher.doFinal(value, 0, value.length, out, DATA_AT);
      return out;
    } catch (GeneralSecurityException e) {
      throw new InternalException("cannot encrypt field '" + field + "' of object " + id + ": " + e);
    }
  }

  /**
   * The value sealed in {@code sealed} for field {@code field} of object {@code id}.
   *
   * @throws InternalException when it fails authentication: altered, sealed for another object or
   *     field, written with another key, or not a sealed value at all
   */
  public byte[] open(UUID id, String field, byte[] sealed) {
    if (sealed.length < OVERHEAD || sealed[0] != FORMAT) {
      throw rejected(id, field, "it is not an encrypted value of this format");
    }
    long valueEpoch = ByteBuffer.wrap(sealed, EPOCH_AT, 8).getLong();
    try {
      Cipher cipher = CIPHERS.get();
      cipher.init(Cipher.DECRYPT_MODE, readKey(valueEpoch), new GCMParameterSpec(TAG_BITS, sealed, NONCE_AT, NONCE_BYTES));
      cipher.updateAAD(aad(id, field));
      return cipher.doFinal(sealed, DATA_AT, sealed.length - DATA_AT);
    } catch (AEADBadTagException e) {
      throw rejected(id, field, "it was altered, belongs to another object or field, or was written with another key");
    } catch (GeneralSecurityException e) {
      throw new InternalException("cannot decrypt field '" + field + "' of object " + id + ": " + e);
    }
  }

  // Bounded: a damaged pool full of made-up epochs must not fill the heap with keys.
  private SecretKeySpec readKey(long valueEpoch) {
    SecretKeySpec known = readKeys.get(valueEpoch);
    if (known != null) {
      return known;
    }
    SecretKeySpec derived = aesKey(valueEpoch);
    if (readKeys.size() < MAX_READ_KEYS) {
      readKeys.putIfAbsent(valueEpoch, derived);
    }
    return derived;
  }

  private SecretKeySpec aesKey(long keyEpoch) {
    byte[] label = ByteBuffer.allocate(EPOCH_LABEL.length + 8).put(EPOCH_LABEL).putLong(keyEpoch).array();
    return new SecretKeySpec(key.derive(label), "AES");
  }

  private static byte[] aad(UUID id, String field) {
    byte[] name = field.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(1 + 16 + name.length).put(FORMAT)
        .putLong(id.getMostSignificantBits()).putLong(id.getLeastSignificantBits()).put(name).array();
  }

  private static InternalException rejected(UUID id, String field, String why) {
    return new InternalException("stored value of field '" + field + "' of object " + id
        + " failed decryption and was not returned: " + why);
  }

  private static Cipher newCipher() {
    try {
      return Cipher.getInstance("AES/GCM/NoPadding");
    } catch (GeneralSecurityException e) {
      throw new InternalException("this JVM has no AES/GCM cipher: " + e.getMessage());
    }
  }
}
