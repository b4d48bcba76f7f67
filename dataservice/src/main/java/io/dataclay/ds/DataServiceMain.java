package io.dataclay.ds;

import io.dataclay.client.Channels;
import io.dataclay.ds.lm.BackendSession;
import io.dataclay.ds.status.BackendIdentity;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.server.tracing.Tracing;
import io.grpc.ServerBuilder;

/**
 * The Data Service process: configuration, store, server, registration, Python environment,
 * heartbeat. Exit code 2: bad configuration, a directory another user owns or could reach, or a
 * store that cannot be opened (nothing is overwritten); 1: could not start (e.g. the Logic Module never answered). SIGTERM stops the
 * environment, then the server, then closes the store cleanly.
 */
public final class DataServiceMain {
  private DataServiceMain() {}

  /**
   * Runs a Data Service until SIGTERM; with {@code engines} or {@code settings} (and optionally
   * {@code --json}) it prints the store engine registry or the configuration table and exits.
   */
  public static void main(String[] args) throws InterruptedException {
    String report = ConfigurationReport.forArguments(args);
    if (report != null) {
      System.out.println(report);
      return;
    }
    System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tF %1$tT %4$s %3$s: %5$s%6$s%n");
    DataServiceConfig config;
    try {
      config = DataServiceConfig.fromEnvironment();
    } catch (RuntimeException e) {
      exit(2, "bad configuration: " + e.getMessage());
      return;
    }
    ServerBuilder<?> listener;
    Channels.unreachableAfter(config.unreachableMs());
    Tracing tracing;
    try {
      tracing = Tracing.installFrom(config::tracing);
    } catch (IllegalArgumentException e) {
      exit(2, e.getMessage());
      return;
    }
    try {
      listener = DataServiceServer.listening(config.bindHost(), config.backendPort(), config.tls());
    } catch (RuntimeException e) {
      exit(2, "bad configuration: " + e.getMessage());
      return;
    }
    try {
      BackendDirectory.claim(config.home(), config.backendDir());
    } catch (RuntimeException e) {
      exit(2, e.getMessage());
      return;
    }
    BackendSession admin;
    try {
      admin = BackendSession.connect(config.lmHost(), config.lmPort(), config.tls(), config.clusterSecret(),
          BackendIdFile.readOrCreate(config.backendDir()));
    } catch (RuntimeException e) {
      exit(2, "cannot read or create the backend ID under " + config.backendDir() + ": " + e.getMessage());
      return;
    }
    logInMeanwhile(admin);
    ObjectStore store;
    try {
      store = ObjectStores.open(config.storeConfig());
    } catch (RuntimeException e) {
      exit(2, "cannot open the " + config.storeEngine() + " store at " + config.storePath() + ": " + e.getMessage());
      return;
    }
    DataServiceNode node;
    try {
      node = DataServiceNode.start(config, store, listener, admin);
    } catch (Exception e) {
      store.close();
      // a file-system exception's message is only the path: its kind says what went wrong
      exit(1, "could not start: " + (e instanceof java.nio.file.FileSystemException ? e.toString() : e.getMessage()));
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      node.close();
      store.close();
      tracing.close();
    }, "dataclay-ds-shutdown"));
    BackendIdentity me = node.identity();
    System.err.println("data service " + me.name() + " (" + me.id() + ") listening on port " + me.port() + ", on "
        + config.bindHost() + " (advertised as " + me.host() + "), " + config.tls() + ", store " + me.storeEngine()
        + " at " + config.storePath());
    if (node.metricsPort() != 0) {
      System.err.println("data service " + me.name() + " metrics on port " + node.metricsPort() + " of "
          + config.metrics().host());
    }
    node.blockUntilShutdown();
  }

  /**
   * Logs in to the Logic Module on another thread while the store opens: checking the password
   * costs the Logic Module a deliberate fraction of a second, and the first call warms up this
   * JVM's client. Registration uses the session, or logs in itself when this failed.
   */
  private static void logInMeanwhile(BackendSession admin) {
    Thread login = new Thread(() -> {
      try {
        admin.client();
      } catch (RuntimeException e) {
        // registration retries, and reports what is wrong if it keeps failing
      }
    }, "dataclay-ds-login");
    login.setDaemon(true);
    login.start();
  }

  private static void exit(int code, String message) {
    System.err.println("data service: " + message.replace('\n', ' '));
    System.exit(code);
  }
}
