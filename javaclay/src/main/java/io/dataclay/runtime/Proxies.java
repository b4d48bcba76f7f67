package io.dataclay.runtime;

import io.dataclay.api.DataClayObject;
import io.dataclay.api.ObjectState;
import io.dataclay.api.ObjectStates;
import java.util.UUID;
import org.objenesis.ObjenesisStd;
import org.objenesis.instantiator.ObjectInstantiator;

/** Makes proxies: model instances created without a constructor whose calls go to their backend. */
final class Proxies {
  private static final ObjenesisStd OBJENESIS = new ObjenesisStd(false);
  private static final ClassValue<ObjectInstantiator<?>> CACHE = new ClassValue<>() {
    @Override
    protected ObjectInstantiator<?> computeValue(Class<?> type) {
      return OBJENESIS.getInstantiatorOf(type);
    }
  };

  private Proxies() {}

  /** A proxy of object {@code id} of class {@code type}, last seen on {@code backend} (may be null). */
  static <T extends DataClayObject> T of(Class<T> type, UUID id, UUID backend) {
    T proxy = type.cast(CACHE.get(type).newInstance());
    ObjectStates.set(proxy, new ObjectState(id, backend, true));
    return proxy;
  }
}
