package io.dataclay.runtime;

import io.dataclay.api.DataClayObject;
import io.dataclay.serialization.ModelClasses;

/**
 * The model classes a client accepts in values it receives: DataClayObject subclasses (and the
 * classes nested in them) that its class loader can load. A name that is neither is refused
 * before anything of it is initialised.
 */
final class ClientModelClasses implements ModelClasses {
  private final ClassLoader loader;

  ClientModelClasses(ClassLoader loader) {
    this.loader = loader;
  }

  @Override
  public Class<?> find(String name) {
    try {
      Class<?> c = Class.forName(name, false, loader);
      return contains(c) ? c : null;
    } catch (ClassNotFoundException | LinkageError e) {
      return null;
    }
  }

  @Override
  public boolean contains(Class<?> type) {
    for (Class<?> c = type; c != null; c = c.getEnclosingClass()) {
      if (DataClayObject.class.isAssignableFrom(c) && c != DataClayObject.class) {
        return true;
      }
    }
    return false;
  }
}
