package io.dataclay.runtime;

import io.dataclay.api.DataClayObject;
import io.dataclay.api.ObjectState;
import io.dataclay.api.ObjectStates;
import io.dataclay.serialization.Instances;
import java.util.UUID;

/** Makes proxies: model instances created without a constructor whose calls go to their backend. */
final class Proxies {
  private Proxies() {}

  /** A proxy of object {@code id} of class {@code type}, last seen on {@code backend} (may be null). */
  static <T extends DataClayObject> T of(Class<T> type, UUID id, UUID backend) {
    T proxy = Instances.of(type);
    ObjectStates.set(proxy, new ObjectState(id, backend, true));
    return proxy;
  }
}
