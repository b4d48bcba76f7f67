package io.dataclay.ds;

import io.dataclay.ds.service.BackendIdentity;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.ObjectStores;

/**
 * The Data Service process: configuration, store, server, registration, Python environment,
 * heartbeat. Exit code 2: bad configuration or a store that cannot be opened (nothing is
 * overwritten); 1: could not start (e.g. the Logic Module never answered). SIGTERM stops the
 * environment, then the server, then closes the store cleanly.
 */
public final class DataServiceMain {
  private DataServiceMain() {}

  /** Runs a Data Service until SIGTERM. */
  public static void main(String[] args) throws InterruptedException {
    System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tF %1$tT %4$s %3$s: %5$s%6$s%n");
    DataServiceConfig config;
    try {
      config = DataServiceConfig.fromEnvironment();
    } catch (RuntimeException e) {
      exit(2, "bad configuration: " + e.getMessage());
      return;
    }
    ObjectStore store;
    try {
      store = ObjectStores.open(config.storeConfig());
    } catch (RuntimeException e) {
      exit(2, "cannot open the " + config.storeEngine() + " store at " + config.storePath() + ": " + e.getMessage());
      return;
    }
    DataServiceNode node;
    try {
      node = DataServiceNode.start(config, store);
    } catch (Exception e) {
      store.close();
      exit(1, "could not start: " + e.getMessage());
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      node.close();
      store.close();
    }, "dataclay-ds-shutdown"));
    BackendIdentity me = node.identity();
    System.err.println("data service " + me.name() + " (" + me.id() + ") listening on port " + me.port()
        + ", store " + me.storeEngine() + " at " + config.storePath());
    node.blockUntilShutdown();
  }

  private static void exit(int code, String message) {
    System.err.println("data service: " + message.replace('\n', ' '));
    System.exit(code);
  }
}
