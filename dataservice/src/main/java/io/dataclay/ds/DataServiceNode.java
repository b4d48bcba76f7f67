package io.dataclay.ds;

import io.dataclay.common.Language;
import io.dataclay.common.PrivatePaths;
import io.dataclay.ds.collection.ReferenceRecorder;
import io.dataclay.ds.deployment.ModelFiles;
import io.dataclay.ds.deployment.ModelService;
import io.dataclay.ds.ee.CallRelay;
import io.dataclay.ds.ee.EnvironmentLaunch;
import io.dataclay.ds.ee.EnvironmentPool;
import io.dataclay.ds.ee.EnvironmentSettings;
import io.dataclay.ds.ee.LinkServices;
import io.dataclay.ds.ee.StateLoads;
import io.dataclay.ds.ee.java.JavaEnvironment;
import io.dataclay.ds.ee.java.JavaEnvironmentConfig;
import io.dataclay.ds.environments.Environments;
import io.dataclay.ds.execution.ExecutionService;
import io.dataclay.ds.execution.ResultApplier;
import io.dataclay.ds.lm.BackendRegistration;
import io.dataclay.ds.lm.BackendSession;
import io.dataclay.ds.lm.ImportStateQuery;
import io.dataclay.ds.lm.RemoteLogicModule;
import io.dataclay.ds.models.ClassAvailability;
import io.dataclay.ds.models.ModelBundle;
import io.dataclay.ds.models.ModelCatalog;
import io.dataclay.ds.models.ModelRegistry;
import io.dataclay.ds.objects.IdClaims;
import io.dataclay.ds.objects.ObjectService;
import io.dataclay.ds.objects.QuotaStore;
import io.dataclay.ds.objects.ReferenceAccess;
import io.dataclay.ds.peers.RemotePeers;
import io.dataclay.ds.registration.GroupCommitRegistrar;
import io.dataclay.ds.registration.Reconciliation;
import io.dataclay.ds.replication.CopyService;
import io.dataclay.ds.replication.Mastership;
import io.dataclay.ds.replication.ReplicaSets;
import io.dataclay.ds.replication.ReplicationMetrics;
import io.dataclay.ds.replication.VersionService;
import io.dataclay.ds.callport.CallPortServer;
import io.dataclay.ds.callport.CallPortServices;
import io.dataclay.ds.servicer.CallExecutors;
import io.dataclay.ds.servicer.DataServiceServicer;
import io.dataclay.ds.servicer.SnapshotRpcs;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.session.SessionCache;
import io.dataclay.ds.snapshot.ImportStaging;
import io.dataclay.ds.snapshot.SnapshotExports;
import io.dataclay.ds.snapshot.SnapshotStore;
import io.dataclay.ds.status.BackendIdentity;
import io.dataclay.ds.status.BackendMetrics;
import io.dataclay.ds.status.BackendReport;
import io.dataclay.ds.status.StatusService;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.server.GrpcServer;
import io.dataclay.server.tracing.Tracing;
import io.dataclay.server.metrics.MetricsEndpoint;
import io.dataclay.server.metrics.ServerMetrics;
import io.dataclay.server.PeerCertificates;
import io.grpc.ServerBuilder;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiPredicate;
import java.util.logging.Logger;

/**
 * Everything one Data Service process runs, started in order (server, login, Python environment,
 * registration, models, heartbeat) and stopped in reverse. The store is the caller's: it is opened
 * before and closed after.
 */
public final class DataServiceNode implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(DataServiceNode.class.getName());
  private static final long REGISTER_TIMEOUT_MS = 60_000;
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

  private final ExecutorService calls = Executors.newCachedThreadPool(daemons("dataclay-ds-call"));
  private final ScheduledThreadPoolExecutor timer = timer("dataclay-ds-ee");
  private final ScheduledExecutorService heartbeats =
      Executors.newSingleThreadScheduledExecutor(daemons("dataclay-ds-heartbeat"));
  private final BackendSession admin;
  private final ScheduledExecutorService snapshotTimer =
      Executors.newSingleThreadScheduledExecutor(daemons("dataclay-ds-snapshot"));
  private final Environments environments = new Environments();
  private SnapshotExports exports;
  private StatusService status;
  private GrpcServer server;
  private CallPortServer callPort;
  private final ServerMetrics metrics = new ServerMetrics();
  private MetricsEndpoint metricsEndpoint;
  private BackendRegistration registration;
  private GroupCommitRegistrar registrations;
  private boolean stoppedCleanly;
  private Reconciliation reconciliation; // after an unclean stop
  private Path backendDir;
  private RemotePeers peers;
  private CallRelay relay;

  private DataServiceNode(DataServiceConfig config, ObjectStore store, ServerBuilder<?> serverBuilder,
      BackendSession admin) throws IOException, InterruptedException {
    this.admin = admin;
    try {
      run(config, store, serverBuilder);
    } catch (IOException | InterruptedException | RuntimeException e) {
      close();
      throw e;
    }
  }

  private void run(DataServiceConfig config, ObjectStore engineStore, ServerBuilder<?> serverBuilder)
      throws IOException, InterruptedException {
    backendDir = config.backendDir();
    UUID id = BackendIdFile.readOrCreate(config.backendDir());
    PrivatePaths.directory(config.pythonModelsDir(), "the models directory");
    stoppedCleanly = CleanStopMark.consume(config.backendDir());
    GroupCommitRegistrar lm = new GroupCommitRegistrar(new RemoteLogicModule(admin, id));
    registrations = lm;
    SessionCache sessions = new SessionCache(lm);
    ReferenceRecorder recorder = new ReferenceRecorder(engineStore, sessions::resolve, calls,
        ReferenceRecorder.DEFAULT_BUDGET);
    // every component writes through this store: garbage collection sees every reference written,
    // and a snapshot's write gate and copy-on-write see every write
    SnapshotStore snapshotStore = new SnapshotStore(recorder.recordingStore());
    // quotas and the value cap come first: a refused write reaches nothing below
    ObjectStore store = new QuotaStore(snapshotStore, config.storageLimits());
    IdClaims claims = new IdClaims();
    ModelRegistry registry = new ModelRegistry();
    ClassAvailability classes = new ClassAvailability(registry, config.eeWaitMs());
    RemoteLogicModule directory = new RemoteLogicModule(admin, id);
    ReferenceAccess references = new ReferenceAccess(store, directory, claims);
    Mastership mastership = new Mastership(id, System::nanoTime);
    peers = new RemotePeers(admin, config.tls(), mastership::ownTerm);
    ReplicaSets replicas = new ReplicaSets(peers, directory, mastership, calls);
    ReplicationMetrics.register(metrics.registry(), replicas, mastership);
    ResultApplier applier = new ResultApplier(store, lm, claims, calls, replicas, recorder, classes, environments,
        references);
    relay = new CallRelay(() -> admin.client().getBackends(), config.lmHost(), config.lmPort(), config.tls());
    addEnvironments(config, id, new LinkServices(applier, new StateLoads(store), relay, calls, timer), applier, store,
        registry);
    List<Language> languages = environments.languages();
    String engine = store.stats().engine();
    status = new StatusService(store, environments, metrics.rpc()::callsStarted, metrics.rpc()::latencyByMethod,
        new BackendIdentity(id, config.backendName(), config.backendHost(), 0, languages, engine));
    ModelService models = new ModelService(new ModelFiles(config.pythonModelsDir()), registry, environments);
    classes.refreshWith(() -> models.reconcile(registration.models()));
    CopyService copies = new CopyService(store, environments, replicas, peers, directory, claims, classes, mastership,
        id);
    ImportStaging staging = new ImportStaging(store, config.backendDir().resolve("imports"), id,
        new ImportStateQuery(admin), environments::evict, new ImportStaging.Replicas() {
          @Override
          public void set(UUID oid, Set<String> backends) {
            replicas.set(oid, backends);
          }

          @Override
          public void forget(Collection<UUID> ids) {
            replicas.forget(ids);
          }
        });
    exports = new SnapshotExports(snapshotStore, staging::stagedIds, snapshotTimer, SnapshotExports.defaultBudget());
    ExecutionService execution = new ExecutionService(store, environments, recorder, classes, replicas, calls,
        config.storageLimits().valueBytes());
    DataServiceServicer dataService = new DataServiceServicer(sessions,
        new ObjectService(store, lm, classes, claims, recorder, references), execution,
        models,
        status, calls, copies,
        new VersionService(store, copies, replicas, peers, directory, lm, recorder, id), recorder,
        config.tls().enabled() ? PeerCertificates::callerIsClusterServer : () -> true,
        new SnapshotRpcs(exports, staging, config.maxMessageBytes()), () -> callPort == null ? 0 : callPort.port());
    BackendMetrics.register(metrics.registry(), status::report, store::figures);
    CallExecutors placement = new CallExecutors(sessions, calls, store.writesWithoutWaiting(), classes);
    server = DataServiceServer.serving(serverBuilder, dataService, metrics.rpc(), placement,
        config.maxMessageBytes()).start();
    status.identify(new BackendIdentity(id, config.backendName(), config.backendHost(), server.port(), languages, engine));
    if (config.callPort() >= 0 && !Tracing.current().enabled()) {
      // a call made there is not traced: with tracing on, clients keep every call on gRPC
      callPort = CallPortServer.start(config.bindHost(), config.callPort(), config.tls(), DataServiceConfig.BIND_HOST,
          new CallPortServices(placement, execution, metrics.rpc(), config.maxMessageBytes()));
    }
    if (config.metrics().enabled()) {
      // before this backend registers: a port that cannot be bound stops it before anyone uses it
      metricsEndpoint = config.metrics().start(metrics.registry(), config.tls());
    }
    registration = new BackendRegistration(admin, status::identity, heartbeats, config.heartbeatMs(), sessions,
        mastership, copies::demote, revision -> {
          if (classes.ready() && revision > registry.synced()) {
            classes.catchUp(calls); // a model change this backend missed (a withdrawal, a removal)
          }
        });
    registration.logIn(REGISTER_TIMEOUT_MS);
    registration.register(REGISTER_TIMEOUT_MS);
    // before anything registers stored objects: what unfinished imports staged must not be registered
    staging.recover();
    snapshotTimer.scheduleWithFixedDelay(staging::sweep, 30, 30, TimeUnit.SECONDS);
    replicas.load(directory.replicatedFrom(id.toString()));
    registration.firstBeat(REGISTER_TIMEOUT_MS); // stale master copies go before anything is served
    if (!stoppedCleanly) {
      reconciliation = Reconciliation.start(store, lm, environments::evict);
    }
    models.reconcile(registration.models());
    classes.markInstalled(); // calls that waited for the models run from here on
    registration.startHeartbeat();
  }

  /**
   * Starts a Data Service on {@code store}: serves on {@code serverBuilder}, talks to the Logic
   * Module through {@code admin}. On failure everything started so far is stopped.
   */
  public static DataServiceNode start(DataServiceConfig config, ObjectStore store, ServerBuilder<?> serverBuilder,
      BackendSession admin) throws IOException, InterruptedException {
    return new DataServiceNode(config, store, serverBuilder, admin);
  }

  /** Who this backend is (ID, name, address, bound port, languages, engine). */
  public BackendIdentity identity() {
    return status.identity();
  }

  /** The same snapshot GetStatus answers. */
  public BackendReport report() {
    return status.report();
  }

  /**
   * Tasks waiting on the timer of this backend's execution environments (deadline checks, restarts,
   * start-up checks): a few per process, whatever the call rate.
   */
  public int environmentTimerTasks() {
    return timer.getQueue().size();
  }

  /** The port Prometheus metrics are served on; 0 when they are not. */
  public int metricsPort() {
    return metricsEndpoint == null ? 0 : metricsEndpoint.port();
  }

  /** Waits until the server stopped. */
  public void blockUntilShutdown() throws InterruptedException {
    server.blockUntilShutdown();
  }

  /**
   * Stops the Python environment and the server, lets the registrations under way get their
   * answers, then stops the heartbeat; leaves the clean-stop mark only when nothing stored here can
   * be left without the Logic Module's answer.
   */
  @Override
  public void close() {
    if (metricsEndpoint != null) {
      metricsEndpoint.close();
    }
    if (exports != null) {
      exports.close(); // a freeze in progress opens its gate
    }
    snapshotTimer.shutdownNow();
    environments.closeAll();
    if (callPort != null) {
      callPort.close(CLOSE_WAIT); // calls in flight are answered first, as gRPC's are
    }
    // every call finished: a refused call removed what it stored before it answered
    boolean callsFinished = server == null || server.stop();
    if (reconciliation != null) {
      reconciliation.stop();
    }
    if (registrations != null) {
      // an unclean stop is still unreconciled until every stored object got its answer
      boolean reconciled = stoppedCleanly || reconciliation != null && reconciliation.finished();
      if (registrations.close(CLOSE_WAIT) && callsFinished && reconciled) {
        CleanStopMark.leave(backendDir);
      } else {
        LOG.warning("stopping before every stored object got the Logic Module's answer (calls cut short: "
            + !callsFinished + "; registrations waiting: " + registrations.pending() + "; or the re-registration"
            + " after an unclean stop unfinished): the next start registers every stored object again");
      }
    }
    if (registration != null) {
      registration.close();
    }
    if (peers != null) {
      peers.close();
    }
    if (relay != null) {
      relay.close();
    }
    admin.close();
    heartbeats.shutdownNow();
    timer.shutdownNow();
    calls.shutdownNow();
  }

  // The Java environment fetches models itself when it meets a class it does not know: only those
  // installed here, not withdrawn (a list fetched before a withdrawal must not bring one back).
  private static List<ModelBundle> loadedOnly(ModelRegistry registry, ModelCatalog catalog) {
    return catalog.loadable().stream().filter(b -> registry.loaded(b.namespace())).toList();
  }

  /**
   * The execution environments: confined processes, one per account and language, started at an
   * account's first call through the sandbox launcher; Java in the Data Service's own process
   * only when the configuration says so (a cluster whose only user is its owner).
   */
  private void addEnvironments(DataServiceConfig config, UUID id, LinkServices services, ResultApplier applier,
      ObjectStore store, ModelRegistry registry) throws IOException {
    EnvironmentSettings settings = config.environments();
    Map<String, String> passed = new HashMap<>(config.environmentProcessSettings());
    passed.put("DATACLAY_EE_BACKEND_ID", id.toString());
    BiPredicate<Session, ModelBundle> usable = (session, model) -> model.usableBy(session);
    if (config.python() != null) {
      environments.add(new EnvironmentPool(EnvironmentLaunch.python(config.python(), settings, passed), services,
          settings, config.eeWaitMs(), config.environmentsDir(), usable));
    }
    if (settings.javaInProcess()) {
      environments.add(new JavaEnvironment(store, applier, calls, id, JavaEnvironmentConfig.from(config.environment()),
          admin::client, config.tls(), () -> loadedOnly(registry, registration.models())));
    } else {
      environments.add(new EnvironmentPool(EnvironmentLaunch.java(config.launcherPython(), settings, passed,
          System.getProperty("java.home"), System.getProperty("java.class.path")), services, settings,
          config.eeWaitMs(), config.environmentsDir(), usable));
    }
  }

  // One daemon thread; a task cancelled leaves the queue at once instead of at its due time.
  private static ScheduledThreadPoolExecutor timer(String name) {
    ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, daemons(name));
    t.setRemoveOnCancelPolicy(true);
    return t;
  }

  private static ThreadFactory daemons(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
