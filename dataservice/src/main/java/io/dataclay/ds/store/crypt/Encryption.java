package io.dataclay.ds.store.crypt;

import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoreConfig;

/**
 * Encryption at rest for one store open, decided by {@link io.dataclay.ds.store.ObjectStores}
 * from the configuration: the store key an engine admits against what its pool recorded
 * ({@link KeyAdmission}), and the layer that seals values on their way to the engine's storage.
 * The key file is read when an engine first asks for the key, so an engine that keeps nothing at
 * rest (memory) never reads it.
 */
public final class Encryption {
  private final StoreConfig config;
  private StoreKey key;
  private boolean read;

  private Encryption(StoreConfig config) {
    this.config = config;
  }

  /** The encryption {@code config} asks for: with the key in its key file, or none. */
  public static Encryption forStore(StoreConfig config) {
    return new Encryption(config);
  }

  /**
   * The store key, read and checked the first time; null when the configuration names none.
   *
   * @throws io.dataclay.exceptions.InvalidArgumentException naming the key file when it cannot be used
   */
  public synchronized StoreKey key() {
    if (!read) {
      key = StoreKey.forStore(config);
      read = true;
    }
    return key;
  }

  /**
   * {@code storage} with every field value sealed on its way in and opened on its way out, or
   * {@code storage} itself when there is no key. Call it once the engine admitted {@link #key()}.
   */
  public ObjectStore seal(ObjectStore storage) {
    StoreKey k = key();
    return k == null ? storage : new SealingStore(storage, new FieldCipher(k));
  }
}
