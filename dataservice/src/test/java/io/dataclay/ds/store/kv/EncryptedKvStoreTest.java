package io.dataclay.ds.store.kv;

import io.dataclay.ds.store.EncryptedStoreContract;

/** The kv engine with a store key passes the whole store contract and the encryption promises. */
class EncryptedKvStoreTest extends EncryptedStoreContract {
  @Override
  protected String engine() {
    return KvStore.ENGINE;
  }
}
