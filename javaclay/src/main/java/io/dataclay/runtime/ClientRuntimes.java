package io.dataclay.runtime;

import io.dataclay.api.ClientRuntimeProvider;
import io.dataclay.api.ObjectRuntime;
import java.nio.file.Path;

/** Provides {@link ClientRuntime} to {@link io.dataclay.api.DataClay#init} (see META-INF/services). */
public final class ClientRuntimes implements ClientRuntimeProvider {
  @Override
  public ObjectRuntime open(Path configFile, ClassLoader loader) {
    return new ClientRuntime(ClientConfig.load(configFile, System.getenv()), loader);
  }
}
