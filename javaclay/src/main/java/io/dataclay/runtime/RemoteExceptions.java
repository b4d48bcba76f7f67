package io.dataclay.runtime;

import io.dataclay.exceptions.RemoteException;
import io.dataclay.serialization.ModelClasses;
import java.lang.reflect.Constructor;

/**
 * Turns a remote failure back into the exception the model threw, when the client can: a
 * Throwable of the JDK (java.*) or of a model class, with a (String) constructor. Anything else
 * stays a {@link RemoteException} carrying the type name, message and remote trace.
 */
final class RemoteExceptions {
  private RemoteExceptions() {}

  /** The rebuilt exception (the remote one as its cause), or {@code remote} itself. */
  static RuntimeException rebuild(RemoteException remote, ModelClasses models) {
    String type = remote.remoteType();
    try {
      Class<?> c = type.startsWith("java.") ? Class.forName(type, false, ClassLoader.getPlatformClassLoader())
          : models.find(type);
      if (c == null || !Throwable.class.isAssignableFrom(c)) {
        return remote;
      }
      Constructor<?> ctor = c.getConstructor(String.class);
      Throwable t = (Throwable) ctor.newInstance(remote.remoteMessage());
      if (t.getCause() == null) {
        t.initCause(remote);
      }
      return sneaky(t);
    } catch (ReflectiveOperationException | LinkageError | IllegalStateException e) {
      return remote;
    }
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
    throw (T) t;
  }
}
