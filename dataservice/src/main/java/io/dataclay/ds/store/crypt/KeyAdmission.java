package io.dataclay.ds.store.crypt;

import io.dataclay.exceptions.InvalidArgumentException;

/**
 * Decides, from what a pool recorded when it was made, whether a store may open it with the key
 * it was given (or without one): a pool is encrypted from its creation or never, and always with
 * the same key. Every refusal happens before anything in the pool is written, and says why.
 */
public final class KeyAdmission {
  private KeyAdmission() {}

  /**
   * The outcome: whether the pool's values are encrypted, and the key check a new encrypted pool
   * must record before its first write (null when there is none to record).
   */
  public record Admitted(boolean encrypted, String checkToRecord) {}

  /**
   * Admits {@code key} (null: none given) to the pool described by {@code pool}.
   *
   * @param recordedCheck the key check the pool recorded, null when it recorded none (plain or new)
   * @param fresh whether the pool holds nothing yet, so it may become encrypted now
   * @throws InvalidArgumentException when the pool is encrypted and no key or another key was
   *     given, or it holds unencrypted data and a key was given
   */
  public static Admitted admit(StoreKey key, String recordedCheck, boolean fresh, String pool) {
    if (key == null) {
      if (recordedCheck != null) {
        throw new InvalidArgumentException(pool + " is encrypted and no key was given: set DATACLAY_STORE_KEY_FILE to"
            + " the file of the key it was made with; nothing was changed");
      }
      return new Admitted(false, null);
    }
    if (recordedCheck == null) {
      if (!fresh) {
        throw new InvalidArgumentException(pool + " was made without encryption and a key was given (" + key.source()
            + "): an existing pool cannot be encrypted in place; unset DATACLAY_STORE_KEY_FILE, or use a new pool;"
            + " nothing was changed");
      }
      return new Admitted(true, key.newCheck());
    }
    if (!key.matches(recordedCheck)) {
      throw new InvalidArgumentException("the key in " + key.source() + " is not the key " + pool
          + " was encrypted with (its key check does not match); nothing was changed");
    }
    return new Admitted(true, null);
  }
}
