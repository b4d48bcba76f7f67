package io.dataclay.api;

import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.runtime.ClientConfig;
import io.dataclay.runtime.ClientRuntime;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;

/** Starts and ends a Java program's use of dataClay: one session, shared by every thread. */
public final class DataClay {
  private DataClay() {}

  /**
   * Opens the session from $DATACLAY_HOME/client.properties (if it exists) and the DATACLAY_*
   * environment (which wins); model classes load through the thread's context class loader.
   */
  public static synchronized void init() {
    init(null);
  }

  /** Like {@link #init()}, reading {@code configFile} instead of $DATACLAY_HOME/client.properties. */
  public static synchronized void init(Path configFile) {
    if (Runtimes.clientRuntime() != null) {
      throw new InvalidArgumentException("dataClay is already initialised in this process: call DataClay.finish() first");
    }
    ClassLoader loader = Thread.currentThread().getContextClassLoader();
    Runtimes.installClient(new ClientRuntime(ClientConfig.load(configFile, System.getenv()),
        loader != null ? loader : DataClay.class.getClassLoader()));
  }

  /** Closes the session and every connection; a no-op when not initialised. */
  public static synchronized void finish() {
    ObjectRuntime r = Runtimes.clientRuntime();
    Runtimes.installClient(null);
    if (r instanceof AutoCloseable c) {
      try {
        c.close();
      } catch (Exception e) {
        throw new IllegalStateException("closing the dataClay session failed: " + e.getMessage(), e);
      }
    }
  }

  /** The persistent object with this ID: a proxy of its model class, which this program must be able to load. */
  public static DataClayObject getByID(UUID id) {
    return Runtimes.current().getByID(id);
  }

  /** The registered backends by ID (name, address, languages, liveness), fresh from the Logic Module. */
  public static Map<UUID, BackendInfo> getBackends() {
    return Runtimes.current().getBackends();
  }
}
