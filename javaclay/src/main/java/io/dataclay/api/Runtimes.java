package io.dataclay.api;

import io.dataclay.common.CallScoped;
import io.dataclay.exceptions.ObjectNotPersistentException;
import java.util.function.Supplier;

/**
 * The runtime model objects use: the one a backend installed for the current thread (while it runs
 * a method), else the client runtime of {@link DataClay#init()}.
 */
public final class Runtimes {
  private static final CallScoped<ObjectRuntime> ON_THREAD = new CallScoped<>();
  private static volatile ObjectRuntime client;

  private Runtimes() {}

  /** The runtime for the current thread; fails when dataClay is not initialised. */
  public static ObjectRuntime current() {
    ObjectRuntime r = ON_THREAD.get();
    if (r == null) {
      r = client;
    }
    if (r == null) {
      throw new ObjectNotPersistentException(
          "dataClay is not initialised in this process: call DataClay.init() first");
    }
    return r;
  }

  /** Runs {@code work} with {@code runtime} as this thread's runtime (backends, around a method call). */
  public static <T> T runWith(ObjectRuntime runtime, Supplier<T> work) {
    return ON_THREAD.call(runtime, work);
  }

  static void installClient(ObjectRuntime runtime) {
    client = runtime;
  }

  static ObjectRuntime clientRuntime() {
    return client;
  }
}
