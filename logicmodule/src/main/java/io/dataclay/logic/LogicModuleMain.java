package io.dataclay.logic;

import io.dataclay.client.Channels;
import io.dataclay.common.PrivatePaths;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.logic.accounts.AccountService;
import io.dataclay.logic.checks.Checks;
import io.dataclay.logic.collection.PeriodicCollection;
import io.dataclay.logic.metadata.MetadataStore;
import io.dataclay.logic.metadata.MetadataUnavailableException;
import io.dataclay.logic.outgoing.GrpcBackendCalls;
import io.dataclay.logic.service.LogicModuleService;
import io.dataclay.server.GrpcServer;
import io.dataclay.server.PeerCertificates;
import io.dataclay.server.metrics.MetricsEndpoint;
import io.dataclay.server.tracing.Tracing;
import io.dataclay.rpc.SessionMetadata;
import java.io.IOException;
import java.time.Clock;
import java.util.logging.Logger;

/**
 * The Logic Module process: configuration from the environment, metadata database, bootstrap
 * accounts, then serve until SIGTERM. Exit codes: 2 bad configuration (also a home another user
 * owns or could reach), 3 metadata database unusable, 4 port unavailable.
 */
public final class LogicModuleMain {
  private static final Logger LOG = Logger.getLogger(LogicModuleMain.class.getName());

  private LogicModuleMain() {}

  /**
   * Starts the Logic Module and blocks until it is stopped; {@code settings [--json]} instead prints
   * the configuration table (every DATACLAY_* key, its default and meaning) and exits.
   */
  public static void main(String[] args) throws InterruptedException {
    if (args.length > 0 && args[0].equals("settings")) {
      printSettings(args);
      return;
    }
    if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
      System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tFT%1$tT.%1$tL %4$s %3$s: %5$s%6$s%n");
    }
    LogicModuleConfig config;
    try {
      config = LogicModuleConfig.fromEnvironment();
    } catch (IllegalArgumentException e) {
      exit(2, "bad configuration: " + e.getMessage());
      return;
    }
    Channels.unreachableAfter(config.unreachableMs());
    Tracing tracing;
    try {
      tracing = Tracing.installFrom(config::tracing);
    } catch (IllegalArgumentException e) {
      exit(2, e.getMessage());
      return;
    }
    if (config.metadataInHome()) {
      try {
        PrivatePaths.directory(config.home(), LogicModuleConfig.Setting.HOME.key());
      } catch (InvalidArgumentException e) {
        exit(2, e.getMessage());
        return;
      }
    }
    MetadataStore store;
    try {
      store = MetadataStore.open(config.metadataUrl(), config.metadataSync());
    } catch (MetadataUnavailableException e) {
      exit(3, e.getMessage());
      return;
    }
    LOG.info("metadata database: " + store.describe());
    GrpcBackendCalls deployer = new GrpcBackendCalls(config.tls());
    Checks.minPasswordLength(config.minPasswordLength());
    GrpcServer server;
    LogicModuleService service;
    try {
      service = new LogicModuleService(store, deployer, new LogicModuleService.Settings(config.sessionTtl(),
          config.backendTimeoutMs(), config.clusterSecret(), config.maxModelBytes(),
          config.tls().enabled() ? PeerCertificates::callerIsClusterServer : () -> true, config.promoteAfterMs(),
          config.sessionLimits()),
          Clock.systemUTC(),
          SessionMetadata::currentPeer);
      bootstrap(service, config);
      server = LogicModuleServer.listening(config.bindHost(), config.port(), config.tls(), service,
          config.maxMessageBytes()).start();
    } catch (DataClayException e) {
      close(deployer, store);
      exit(e instanceof InvalidArgumentException ? 2 : 3, e.getMessage());
      return;
    } catch (IOException e) {
      close(deployer, store);
      exit(4, "cannot listen on port " + config.port() + " of " + config.bindHost() + ": " + rootMessage(e));
      return;
    }
    MetricsEndpoint metrics = null;
    if (config.metrics().enabled()) {
      try {
        metrics = config.metrics().start(service.metrics().registry(), config.tls());
      } catch (DataClayException | IOException e) {
        server.stop();
        close(deployer, store);
        exit(e instanceof InvalidArgumentException ? 2 : 4, "cannot serve metrics (" + config.metrics() + "): "
            + rootMessage(e));
        return;
      }
      System.err.println("logic module metrics on port " + metrics.port() + " of " + config.metrics().host());
    }
    MetricsEndpoint metricsEndpoint = metrics;
    PeriodicCollection collections = PeriodicCollection.start(service::collectGarbageNow, config.gcInterval());
    service.startFailover();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      if (metricsEndpoint != null) {
        metricsEndpoint.close();
      }
      collections.close();
      service.stopFailover();
      server.stop();
      close(deployer, store);
      tracing.close();
    }, "lm-shutdown"));
    System.err.println("logic module listening on port " + server.port() + " of " + config.bindHost() + ", "
        + config.tls());
    System.err.flush();
    server.blockUntilShutdown();
  }

  private static void printSettings(String[] args) {
    if (args.length == 2 && args[1].equals("--json")) {
      System.out.println(LogicModuleConfig.Setting.json());
      return;
    }
    if (args.length != 1) {
      exit(2, "usage: logicmodule.jar settings [--json]");
    }
    for (LogicModuleConfig.Setting s : LogicModuleConfig.Setting.values()) {
      System.out.println(s.key() + (s.defaultValue().isEmpty() ? "" : " (default " + s.defaultValue() + ")"));
      System.out.println("    " + s.meaning());
    }
  }

  private static void bootstrap(LogicModuleService service, LogicModuleConfig config) {
    if (config.adminUser() == null) {
      LOG.warning("no administrator configured (" + LogicModuleConfig.Setting.USER.key() + " / "
          + LogicModuleConfig.Setting.PASSWORD.key() + " unset): only existing accounts can log in");
      return;
    }
    AccountService.Bootstrap outcome = service.bootstrapAdministrator(config.adminUser(), config.adminPassword());
    if (outcome == AccountService.Bootstrap.CREATED) {
      LOG.info("created administrator account '" + config.adminUser() + "'");
    }
  }

  private static void close(GrpcBackendCalls deployer, MetadataStore store) {
    deployer.close();
    store.close();
  }

  private static String rootMessage(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    return root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
  }

  private static void exit(int code, String message) {
    System.err.println("logic module: " + message);
    System.exit(code);
  }
}
