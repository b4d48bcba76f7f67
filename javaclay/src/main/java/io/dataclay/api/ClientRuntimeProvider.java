package io.dataclay.api;

import java.nio.file.Path;

/**
 * Opens the client runtime that {@link DataClay#init} installs. The library's runtime package
 * provides the one implementation, listed in {@code META-INF/services}, so that this API does not
 * depend on the runtime that depends on it.
 */
public interface ClientRuntimeProvider {
  /**
   * Opens a session as {@code configFile} (null: $DATACLAY_HOME/client.properties) and the
   * DATACLAY_* environment say, loading model classes through {@code loader}.
   */
  ObjectRuntime open(Path configFile, ClassLoader loader);
}
