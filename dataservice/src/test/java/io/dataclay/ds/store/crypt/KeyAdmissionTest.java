package io.dataclay.ds.store.crypt;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.exceptions.InvalidArgumentException;
import org.junit.jupiter.api.Test;

/** A pool is encrypted from its creation or never, and always with the same key. */
class KeyAdmissionTest {
  private static final String POOL = "pool directory /dev/shm/p";

  private final StoreKey key = StoreKey.of(new byte[32], "/keys/a");
  private final StoreKey other = StoreKey.of(filled(7), "/keys/b");

  @Test
  void aNewPoolWithAKeyRecordsItsCheckAndEncrypts() {
    KeyAdmission.Admitted admitted = KeyAdmission.admit(key, null, true, POOL);

    assertTrue(admitted.encrypted());
    assertNotNull(admitted.checkToRecord());
    assertTrue(key.matches(admitted.checkToRecord()));
  }

  @Test
  void theSameKeyIsAdmittedAndRecordsNothing() {
    KeyAdmission.Admitted admitted = KeyAdmission.admit(key, key.newCheck(), false, POOL);

    assertTrue(admitted.encrypted());
    assertNull(admitted.checkToRecord());
  }

  @Test
  void aPlainPoolWithoutKeyStaysPlain() {
    KeyAdmission.Admitted admitted = KeyAdmission.admit(null, null, false, POOL);

    assertFalse(admitted.encrypted());
    assertNull(admitted.checkToRecord());
  }

  @Test
  void anotherKeyNoKeyAndAKeyOnAPlainPoolAreRefusedSayingWhy() {
    String check = key.newCheck();

    String wrong = assertThrows(InvalidArgumentException.class, () -> KeyAdmission.admit(other, check, false, POOL)).getMessage();
    String none = assertThrows(InvalidArgumentException.class, () -> KeyAdmission.admit(null, check, false, POOL)).getMessage();
    String plain = assertThrows(InvalidArgumentException.class, () -> KeyAdmission.admit(key, null, false, POOL)).getMessage();

    assertTrue(wrong.contains("/keys/b") && wrong.contains("not the key") && wrong.contains(POOL), wrong);
    assertTrue(none.contains("is encrypted and no key was given") && none.contains("DATACLAY_STORE_KEY_FILE"), none);
    assertTrue(plain.contains("made without encryption") && plain.contains("/keys/a"), plain);
    for (String message : new String[] {wrong, none, plain}) {
      assertTrue(message.endsWith("nothing was changed"), message);
    }
  }

  private static byte[] filled(int value) {
    byte[] bytes = new byte[32];
    java.util.Arrays.fill(bytes, (byte) value);
    return bytes;
  }
}
