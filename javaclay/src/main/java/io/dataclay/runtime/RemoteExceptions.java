package io.dataclay.runtime;

import io.dataclay.exceptions.RemoteException;
import java.lang.reflect.Constructor;

/**
 * Turns a remote failure back into the exception the model threw, when the client can: a
 * Throwable of the JDK (java.*) or one the client's model class loader finds (a model's own
 * exception class), with a public (String) constructor. Anything else stays a
 * {@link RemoteException} carrying the type name, message and remote trace.
 */
final class RemoteExceptions {
  private RemoteExceptions() {}

  /**
   * Throws the rebuilt exception (with the remote one as its cause), or returns {@code remote}
   * when it cannot be rebuilt, for the caller to throw.
   */
  static RuntimeException rebuild(RemoteException remote, ClassLoader models) {
    Throwable rebuilt = instantiate(remote, models);
    if (rebuilt == null) {
      return remote;
    }
    // Thrown here, outside any catch: the rebuilt exception may be of a type that a catch meant
    // for reflection failures would take (IllegalStateException, LinkageError, ...).
    return sneaky(rebuilt);
  }

  /** A new instance of the remote type carrying the remote message, or null when there is none. */
  private static Throwable instantiate(RemoteException remote, ClassLoader models) {
    String type = remote.remoteType();
    Throwable t;
    try {
      // loaded without initialising: nothing of a class runs unless it is a Throwable
      Class<?> c = Class.forName(type, false, type.startsWith("java.") ? ClassLoader.getPlatformClassLoader() : models);
      if (!Throwable.class.isAssignableFrom(c)) {
        return null;
      }
      Constructor<?> ctor = c.getConstructor(String.class);
      t = (Throwable) ctor.newInstance(remote.remoteMessage());
    } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
      return null; // no such class here, no public (String) constructor, or its constructor failed
    }
    if (t.getCause() == null) {
      try {
        t.initCause(remote);
      } catch (IllegalStateException | IllegalArgumentException e) {
        // its constructor fixed the cause already (to null): the type and message still matter more
      }
    }
    return t;
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
    throw (T) t;
  }
}
