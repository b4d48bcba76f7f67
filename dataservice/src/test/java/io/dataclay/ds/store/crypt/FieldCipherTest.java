package io.dataclay.ds.store.crypt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.InternalException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** AES-GCM sealing of one field value: only the right key, object and field open it, unaltered. */
class FieldCipherTest {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final byte[] VALUE = "the balance is 1,000,000".getBytes(StandardCharsets.UTF_8);

  private final StoreKey key = StoreKey.of(randomKey(), "test key");
  private final FieldCipher cipher = new FieldCipher(key);
  private final UUID id = UUID.randomUUID();

  @Test
  void aSealedValueOpensToTheValueAndHidesIt() {
    // run
    byte[] sealed = cipher.seal(id, "balance", VALUE);
    // verify
    assertEquals(VALUE.length + FieldCipher.OVERHEAD, sealed.length);
    assertFalse(contains(sealed, VALUE), "the value is in the sealed bytes");
    assertArrayEquals(VALUE, cipher.open(id, "balance", sealed));
    assertArrayEquals(new byte[0], cipher.open(id, "empty", cipher.seal(id, "empty", new byte[0])));
  }

  @Test
  void changingAnyByteOfASealedValueIsRejected() {
    byte[] sealed = cipher.seal(id, "balance", VALUE);
    for (int i = 0; i < sealed.length; i++) {
      // setup
      byte[] tampered = sealed.clone();
      tampered[i] ^= 0x01;
      // run + verify
      InternalException e = assertThrows(InternalException.class, () -> cipher.open(id, "balance", tampered),
          "byte " + i + " changed unnoticed");
      assertTrue(e.getMessage().contains("balance") && e.getMessage().contains(id.toString()), e.getMessage());
    }
    assertThrows(InternalException.class, () -> cipher.open(id, "balance", Arrays.copyOf(sealed, sealed.length - 1)));
  }

  @Test
  void aValueMovedToAnotherObjectOrFieldIsRejected() {
    // setup: two objects' sealed values of the same field, and two fields of one object
    UUID other = UUID.randomUUID();
    byte[] mine = cipher.seal(id, "balance", VALUE);
    byte[] theirs = cipher.seal(other, "balance", "0".getBytes(StandardCharsets.UTF_8));
    byte[] limit = cipher.seal(id, "limit", "0".getBytes(StandardCharsets.UTF_8));
    // run + verify: swapped between objects, or between fields, they no longer open
    assertThrows(InternalException.class, () -> cipher.open(id, "balance", theirs));
    assertThrows(InternalException.class, () -> cipher.open(other, "balance", mine));
    assertThrows(InternalException.class, () -> cipher.open(id, "balance", limit));
    assertThrows(InternalException.class, () -> cipher.open(id, "limit", mine));
  }

  @Test
  void anotherKeyCannotOpenAValue() {
    byte[] sealed = cipher.seal(id, "balance", VALUE);
    FieldCipher stranger = new FieldCipher(StoreKey.of(randomKey(), "another key"));

    InternalException e = assertThrows(InternalException.class, () -> stranger.open(id, "balance", sealed));

    assertTrue(e.getMessage().contains("another key"), e.getMessage());
  }

  @Test
  void aLaterProcessWithTheSameKeyOpensValuesAndNeverRepeatsANonce() {
    // setup: values sealed by one cipher (one process), read by another with the same key
    byte[] earlier = cipher.seal(id, "balance", VALUE);
    FieldCipher later = new FieldCipher(key);
    // run + verify
    assertArrayEquals(VALUE, later.open(id, "balance", earlier));
    Set<String> nonces = new HashSet<>();
    for (int i = 0; i < 10_000; i++) {
      for (FieldCipher c : new FieldCipher[] {cipher, later}) {
        byte[] sealed = c.seal(id, "balance", VALUE);
        assertTrue(nonces.add(Arrays.toString(Arrays.copyOfRange(sealed, 1, 21))), "epoch and nonce repeated");
      }
    }
    assertFalse(Arrays.equals(cipher.seal(id, "balance", VALUE), cipher.seal(id, "balance", VALUE)));
  }

  private static byte[] randomKey() {
    byte[] key = new byte[StoreKey.KEY_BYTES];
    RANDOM.nextBytes(key);
    return key;
  }

  private static boolean contains(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }
}
