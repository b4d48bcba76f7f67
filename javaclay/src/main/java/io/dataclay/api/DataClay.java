package io.dataclay.api;

import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.file.Path;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.UUID;
import java.util.stream.Stream;

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
    ClientRuntimeProvider runtime = ServiceLoader.load(ClientRuntimeProvider.class, DataClay.class.getClassLoader())
        .findFirst().orElseThrow(() -> new IllegalStateException(
            "no dataClay client runtime on the class path: javaclay's jar lists it in META-INF/services"));
    Runtimes.installClient(runtime.open(configFile, loader != null ? loader : DataClay.class.getClassLoader()));
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

  /**
   * The datasets this session may see, by name, with their object counts: its account's own and
   * those of data contracts in force (an administrator: every dataset). A lazy stream: the Logic
   * Module is asked for the next page only when it is needed.
   */
  public static Stream<DatasetInfo> listDatasets() {
    return Runtimes.current().listDatasets(true);
  }

  /**
   * The aliases matching {@code pattern} ('*': any run of characters, '?': one, every other
   * character itself), in every dataset this session may see, by dataset then alias; lazily paged.
   */
  public static Stream<AliasInfo> listAliases(String pattern) {
    return Runtimes.current().listAliases(pattern, null);
  }

  /** {@link #listAliases(String)} in one dataset (null: every one the session may see). */
  public static Stream<AliasInfo> listAliases(String pattern, String dataset) {
    return Runtimes.current().listAliases(pattern, dataset);
  }

  /** The objects of a model class in every dataset this session may see, by dataset and ID; lazily paged. */
  public static Stream<StoredObject> listObjects(Class<? extends DataClayObject> modelClass) {
    return Runtimes.current().listObjects(modelClass.getName(), null);
  }

  /**
   * The objects of a class given by name (a Java binary name or Python "module.Class"; null: every
   * class) in {@code dataset} (null: every one the session may see); lazily paged.
   */
  public static Stream<StoredObject> listObjects(String className, String dataset) {
    return Runtimes.current().listObjects(className, dataset);
  }
}
