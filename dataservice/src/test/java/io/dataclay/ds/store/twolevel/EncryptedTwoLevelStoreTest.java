package io.dataclay.ds.store.twolevel;

import io.dataclay.ds.store.EncryptedStoreContract;
import io.dataclay.ds.store.StoreConfig;
import java.nio.file.Path;

/**
 * The 2lm engine with a store key passes the store contract (durable at checkpoint) and the
 * encryption promises, with a cache small enough that the tests evict and write back.
 */
class EncryptedTwoLevelStoreTest extends EncryptedStoreContract {
  @Override
  protected String engine() {
    return TwoLevelStore.ENGINE;
  }

  @Override
  protected boolean crashConsistent() {
    return false;
  }

  @Override
  protected StoreConfig plainConfig(Path path, long size) {
    return super.plainConfig(path, size).withCache(2L << 20, 200);
  }
}
