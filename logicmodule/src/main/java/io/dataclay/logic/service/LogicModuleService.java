package io.dataclay.logic.service;

import io.dataclay.common.ClusterSecret;
import io.dataclay.server.metrics.ServerMetrics;
import io.dataclay.server.FailureThrottle;
import io.dataclay.common.Language;
import io.dataclay.exceptions.BackendDoesNotExistException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.NotAuthenticatedException;
import io.dataclay.logic.accounts.AccountService;
import io.dataclay.logic.accounts.BackendProofs;
import io.dataclay.logic.accounts.CallerSession;
import io.dataclay.logic.accounts.SessionLimits;
import io.dataclay.logic.accounts.SessionRevocations;
import io.dataclay.logic.backends.BackendCalls;
import io.dataclay.logic.backends.BackendRegistry;
import io.dataclay.logic.backends.RegisteredBackend;
import io.dataclay.logic.checks.Checks;
import io.dataclay.logic.collection.CollectionResult;
import io.dataclay.logic.collection.GarbageCollector;
import io.dataclay.logic.events.ClusterEvent;
import io.dataclay.logic.events.ClusterEvents;
import io.dataclay.logic.failover.Failover;
import io.dataclay.logic.listing.Listing;
import io.dataclay.logic.listing.ListingService;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.ContractRecord;
import io.dataclay.logic.metadata.ImportTables;
import io.dataclay.logic.metadata.ListingStore;
import io.dataclay.logic.metadata.MetadataStore;
import io.dataclay.logic.metadata.ModelRecord;
import io.dataclay.logic.metadata.ModelStore;
import io.dataclay.logic.metadata.ObjectGroup;
import io.dataclay.logic.metadata.ObjectRecord;
import io.dataclay.logic.models.ModelRegistrar;
import io.dataclay.logic.objects.ObjectMetadataService;
import io.dataclay.logic.snapshot.ImportCoordinator;
import io.dataclay.logic.snapshot.ImportOpening;
import io.dataclay.logic.snapshot.SnapshotCoordinator;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The Logic Module's logic in plain Java types, one method per RPC. Each method but
 * {@link #health()}, {@link #newSession} and {@link #newBackendSession} first authenticates the
 * caller's {@code token}; a backend's session serves only RegisterBackend until its ID is registered. Failed log-ins are throttled per account and per peer, unknown tokens
 * per peer.
 */
public final class LogicModuleService {
  /** Reported by Health. */
  public static final String VERSION = "0.1.0";
  // closing a session or changing a contract waits this long for the live backends to hear of it
  private static final Duration REVOCATION_WAIT = Duration.ofMillis(900);

  /**
   * What the service is configured with, beyond its database and backend calls. {@code
   * fromClusterServer} says whether the caller of the call being served proved to be one of the
   * cluster's servers (a CA-verified certificate; always true without TLS): a backend session is
   * accepted only from one.
   */
  public record Settings(Duration sessionTtl, long backendTimeoutMs, ClusterSecret clusterSecret,
      long maxModelBytes, BooleanSupplier fromClusterServer, long promoteAfterMs, SessionLimits sessionLimits) {
    /** Settings of a cluster without TLS that never promotes replicas. */
    public Settings(Duration sessionTtl, long backendTimeoutMs, ClusterSecret clusterSecret, long maxModelBytes) {
      this(sessionTtl, backendTimeoutMs, clusterSecret, maxModelBytes, () -> true, 0);
    }

    /** Settings with the default session limits. */
    public Settings(Duration sessionTtl, long backendTimeoutMs, ClusterSecret clusterSecret, long maxModelBytes,
        BooleanSupplier fromClusterServer, long promoteAfterMs) {
      this(sessionTtl, backendTimeoutMs, clusterSecret, maxModelBytes, fromClusterServer, promoteAfterMs,
          SessionLimits.DEFAULT);
    }
  }

  /**
   * A heartbeat's answer: the sessions closed since the backend's last view, its failover part, and
   * the last model change (a backend that has not installed it fetches the models).
   */
  public record HeartbeatAnswer(SessionRevocations.Since sessions, Failover.HeartbeatPart failover,
      long modelsRevision) {}

  private final AccountService accounts;
  private final BackendRegistry backends;
  private final ModelRegistrar models;
  private final ObjectMetadataService objects;
  private final ListingService listings;
  private final GarbageCollector collector;
  private final SnapshotCoordinator snapshots;
  private final ImportCoordinator imports;
  private final Failover failover;
  private final BackendCalls backendCalls;
  private final SessionRevocations revocations = new SessionRevocations();
  private final ClusterEvents events;
  private final ServerMetrics metrics = new ServerMetrics();
  private final Supplier<String> peer;
  private final BooleanSupplier fromClusterServer;
  private final FailureThrottle loginsPerAccount;
  private final FailureThrottle loginsPerPeer;
  private final FailureThrottle tokensPerPeer;
  private final String systemToken;

  /**
   * Serves the metadata in {@code store}; opens the Logic Module's system session (its token
   * stays in memory) used to call backends through {@code backendCalls}. {@code peer} names the
   * network peer of the call being served (for throttling).
   */
  public LogicModuleService(MetadataStore store, BackendCalls backendCalls, Settings settings, Clock clock,
      Supplier<String> peer) {
    this.accounts = new AccountService(store, settings.sessionTtl(), clock,
        new BackendProofs(settings.clusterSecret(), clock), settings.sessionLimits());
    this.events = new ClusterEvents(clock);
    this.backends = new BackendRegistry(store, settings.backendTimeoutMs(), clock, events);
    this.backendCalls = backendCalls;
    this.peer = peer;
    this.fromClusterServer = settings.fromClusterServer();
    this.loginsPerAccount = new FailureThrottle("to log in as", 5, Duration.ofMinutes(5), Duration.ofSeconds(30),
        Duration.ofMinutes(15), clock::millis);
    this.loginsPerPeer = new FailureThrottle("to log in from", 20, Duration.ofMinutes(1), Duration.ofSeconds(60),
        Duration.ofMinutes(15), clock::millis);
    this.tokensPerPeer = new FailureThrottle("with unknown session tokens from", 50, Duration.ofSeconds(10),
        Duration.ofSeconds(10), Duration.ofMinutes(5), clock::millis);
    this.systemToken = accounts.openSystemSession();
    this.models = new ModelRegistrar(store, accounts, backends, backendCalls, () -> systemToken,
        settings.maxModelBytes());
    this.objects = new ObjectMetadataService(store, accounts, backends);
    this.listings = new ListingService(store);
    this.collector = new GarbageCollector(store, accounts, backends, backendCalls, () -> systemToken);
    this.snapshots = new SnapshotCoordinator(store, backends, backendCalls::snapshots, () -> systemToken,
        Executors.newCachedThreadPool(r -> {
          Thread t = new Thread(r, "lm-snapshot");
          t.setDaemon(true);
          return t;
        }), clock);
    this.imports = new ImportCoordinator(store, backends, models, backendCalls::snapshots, () -> systemToken,
        this::accessChanged, clock);
    this.failover = new Failover(store, backends, backendCalls, () -> systemToken, settings.promoteAfterMs(),
        events);
    LogicModuleMetrics.register(metrics.registry(), objects::objectCount, objects::aliasCount, accounts::openSessions,
        collector::collectedTotal, backends, failover);
  }

  /**
   * Starts the failover rounds: they record backends going silent, and promote the replicas of
   * those that stay silent (see {@link Failover}).
   */
  public void startFailover() {
    failover.start();
  }

  /** The failover logic (tests run its rounds). */
  public Failover failover() {
    return failover;
  }

  /** Stops the failover rounds. */
  public void stopFailover() {
    failover.close();
  }

  /** Creates the configured administrator unless an account of that name exists (never changes it). */
  public AccountService.Bootstrap bootstrapAdministrator(String username, String password) {
    return accounts.bootstrapAdministrator(username, password);
  }

  /** The Logic Module's metrics: its server counts calls there, GetStats and a scrape read them. */
  public ServerMetrics metrics() {
    return metrics;
  }

  /** The version string; needs no session. */
  public String health() {
    return VERSION;
  }

  /** Logs in and opens a session; needs no session. Repeated failures are throttled. */
  public CallerSession newSession(String username, String password, String dataset) {
    String from = peer.get();
    loginsPerPeer.check(from);
    String account = username == null ? "" : username;
    loginsPerAccount.check(account);
    try {
      CallerSession s = accounts.newSession(username, password, dataset);
      loginsPerAccount.succeeded(account);
      return s;
    } catch (NotAuthenticatedException e) {
      loginsPerAccount.failed(account);
      loginsPerPeer.failed(from);
      throw e;
    }
  }

  /** A backend's session, for a proof of the cluster secret; needs no session. Failures are throttled per peer. */
  public CallerSession newBackendSession(String backendId, long issuedAtMs, String nonce, byte[] proof) {
    String from = peer.get();
    loginsPerPeer.check(from);
    try {
      return accounts.newBackendSession(backendId, issuedAtMs, nonce, proof);
    } catch (NotAuthenticatedException e) {
      loginsPerPeer.failed(from);
      throw e;
    }
  }

  /** Closes the caller's session; returns once every live backend refuses its token (or after a short wait). */
  public void closeSession(String token) {
    caller(token);
    String hash = accounts.closeSession(token);
    revocations.closed(hash);
    backendCalls.sessionsClosed(backends.alive(), List.of(hash), false, systemToken, REVOCATION_WAIT);
  }

  /**
   * A client's session as seen by a backend. The token of a backend that is not registered is not
   * a backend's credential yet: other backends must not trust it as one.
   */
  public CallerSession validateSession(String token, String clientToken) {
    CallerSession s = accounts.validateSession(caller(token), clientToken);
    if (s.backend() && !registered(s)) {
      throw new NotAuthenticatedException("the token is the session of backend " + s.backendId()
          + ", which is not registered");
    }
    return s;
  }

  /** Creates an account (administrators only). */
  public void newAccount(String token, String username, String password, boolean admin) {
    accounts.newAccount(caller(token), username, password, admin);
  }

  /** Grants a dataset to an account on the contract's terms, creating the dataset for the caller when absent. */
  public void newDataContract(String token, ContractRecord contract) {
    accounts.newDataContract(caller(token), contract);
    accessChanged();
  }

  /** Takes a contract back; every backend re-checks the sessions it cached. */
  public void revokeDataContract(String token, String dataset, String beneficiary) {
    accounts.revokeDataContract(caller(token), dataset, beneficiary);
    accessChanged();
  }

  /** The contracts on the caller's datasets and those granted to it, each once. */
  public List<ContractRecord> listDataContracts(String token) {
    return accounts.listDataContracts(caller(token));
  }

  /**
   * Lets an account register models, or stops it (administrators only); stopping it withdraws its
   * models from every backend, letting it again restores them.
   */
  public void setModelRegistration(String token, String username, boolean allowed) {
    models.setRegistrationRight(caller(token), username, allowed);
  }

  private void accessChanged() {
    revocations.accessChanged();
    backendCalls.sessionsClosed(backends.alive(), List.of(), true, systemToken, REVOCATION_WAIT);
  }

  /** Registers the next version of a model and deploys it; returns it as stored. */
  public ModelRecord registerModel(String token, ModelRecord model) {
    return models.register(caller(token), model);
  }

  /** The model of a namespace, if the caller may read it (else as if it did not exist). */
  public ModelRecord getModel(String token, String namespace) {
    return models.get(caller(token), namespace);
  }

  /** The models of a language (null: all) the caller may read; backends get all, with the last model change. */
  public ModelStore.Catalog listModels(String token, Language language) {
    return models.list(caller(token), language);
  }

  /** Publishes a model or takes publication back (its owner or an administrator). */
  public void setModelPublished(String token, String namespace, boolean published) {
    models.setPublished(caller(token), namespace, published);
  }

  /**
   * Removes a model from the cluster (its owner or an administrator); refused while objects of its
   * classes exist unless {@code force}. Returns the objects of its classes left behind.
   */
  public long removeModel(String token, String namespace, boolean force) {
    return models.remove(caller(token), namespace, force);
  }

  /**
   * Registers or re-registers a backend (that backend only): the one call a session opened for a
   * backend ID that is not registered yet may make.
   */
  public void registerBackend(String token, BackendRecord backend) {
    backends.register(caller(token, true), backend);
  }

  /**
   * Records a backend's heartbeat (that backend only) and the demotions it {@code applied}; answers
   * the sessions closed (and whether access changed) since the backend's last view {@code
   * seenEpoch}/{@code seen}, and the terms, its master lease and its demotions.
   */
  public HeartbeatAnswer heartbeat(String token, String backendId, long seenEpoch, long seen, List<String> applied) {
    backends.heartbeat(caller(token), backendId);
    for (int i = 0; i < applied.size(); i++) {
      Checks.uuid("demoted_object_ids[" + i + "]", applied.get(i));
    }
    return new HeartbeatAnswer(revocations.since(seenEpoch, seen), failover.heartbeat(backendId, applied),
        models.revision());
  }

  /** Every registered backend with its liveness. */
  public List<RegisteredBackend> getBackends(String token) {
    caller(token);
    return backends.all();
  }

  /**
   * Registers groups of stored objects, each all or nothing with its alias, in one transaction
   * (backends only); one outcome per group, empty when registered (see {@link ObjectMetadataService#registerObjects}).
   */
  public List<Optional<DataClayException>> registerObjects(String token, List<ObjectGroup> groups) {
    return objects.registerObjects(caller(token), groups);
  }

  /** The metadata of an object in one of the caller's datasets. */
  public ObjectRecord getObjectInfo(String token, String id) {
    return objects.info(caller(token), id);
  }

  /** The object an alias names (dataset empty: the session's dataset). */
  public ObjectRecord getObjectByAlias(String token, String alias, String dataset) {
    return objects.byAlias(caller(token), alias, dataset);
  }

  /** Gives an object another alias in its dataset. */
  public void newAlias(String token, String alias, String objectId) {
    objects.newAlias(caller(token), alias, objectId);
  }

  /** Removes an alias (dataset empty: the session's dataset). */
  public void deleteAlias(String token, String alias, String dataset) {
    objects.deleteAlias(caller(token), alias, dataset);
  }

  /** A page of the datasets the caller may see (administrators: all), with object counts if asked. */
  public Listing.Page<Listing.Dataset> listDatasets(String token, int pageSize, String pageToken,
      boolean countObjects) {
    return listings.datasets(caller(token), pageSize, pageToken, countObjects);
  }

  /** A page of the aliases matching a glob pattern, in one dataset or every one the caller may see. */
  public Listing.Page<ListingStore.AliasRow> listAliases(String token, String pattern, String dataset, int pageSize,
      String pageToken) {
    return listings.aliases(caller(token), pattern, dataset, pageSize, pageToken);
  }

  /** A page of the objects of a class (empty: all), in one dataset or every one the caller may see. */
  public Listing.Page<ObjectRecord> listObjects(String token, String className, String dataset, int pageSize,
      String pageToken) {
    return listObjects(token, className, dataset, "", pageSize, pageToken);
  }

  /**
   * A page of the objects of a class (empty: all), in one dataset or every one the caller may see;
   * only the versions of {@code versionOf} unless it is empty (see {@link ListingService#objects}).
   */
  public Listing.Page<ObjectRecord> listObjects(String token, String className, String dataset, String versionOf,
      int pageSize, String pageToken) {
    return listings.objects(caller(token), className, dataset, versionOf, pageSize, pageToken);
  }

  /** Records replicas on a backend (backends only). */
  public void addReplicas(String token, List<String> ids, String backendId) {
    objects.addReplicas(caller(token), ids, backendId);
  }

  /**
   * Records that a backend's replicas are dropped (their master only); the backend gets fresh ones
   * when it is heard again.
   */
  public void removeReplicas(String token, List<String> ids, String backendId) {
    objects.removeReplicas(caller(token), ids, backendId);
    failover.demoted(backendId);
  }

  /** Records moved master copies (backends only). */
  public void setMaster(String token, List<String> ids, String backendId) {
    objects.setMaster(caller(token), ids, backendId);
  }

  /** Forgets objects (backends only). */
  public void unregisterObjects(String token, List<String> ids) {
    objects.unregister(caller(token), ids);
  }

  /** Objects mastered on a backend that have replicas (backends only). */
  public List<ObjectRecord> replicatedObjects(String token, String backendId) {
    return objects.replicatedFrom(caller(token), backendId);
  }

  /** Runs a garbage collection now (administrators only); see {@link GarbageCollector#collect()}. */
  public CollectionResult collectGarbage(String token) {
    CallerSession admin = caller(token);
    admin.requireAdmin("CollectGarbage");
    return collected(collector.collect(), admin.username());
  }

  /** Runs a garbage collection on the Logic Module's own behalf (the periodic run). */
  public CollectionResult collectGarbageNow() {
    return collected(collector.collect(), "periodic");
  }

  // A collection that ran to its end is in the cluster's history; an abandoned one only in the log.
  private CollectionResult collected(CollectionResult r, String by) {
    events.record(ClusterEvent.GC, "", r.collected(), 0, "examined " + r.examined() + " in " + r.durationMs()
        + " ms (" + by + ")");
    return r;
  }

  /**
   * Call counters and durations, metadata totals, the cluster's recent events and the users'
   * sessions per account (administrators only: they describe every account's use).
   */
  public Stats stats(String token) {
    caller(token).requireAdmin("GetStats");
    backends.noteSilences(); // the history is current even between failover rounds
    return new Stats(metrics.rpc().callsStarted(), objects.objectCount(), objects.aliasCount(), accounts.openSessions(),
        collector.collectedTotal(), metrics.rpc().latencyByMethod(), events.list(), accounts.openSessionsByAccount());
  }

  /** Fixes the cut of a new snapshot (administrators); see {@link SnapshotCoordinator#begin}. */
  public SnapshotCoordinator.Cut beginSnapshot(String token, String dataset, boolean passwordHashes) {
    return snapshots.begin(caller(token), dataset, passwordHashes);
  }

  /** The metadata of a snapshot as of its cut (administrators), once. */
  public SnapshotCoordinator.MetadataView snapshotMetadata(String token, String snapshotId) {
    return snapshots.metadata(caller(token), snapshotId);
  }

  /** The snapshots' coordinator, for the metadata export's progress and end (already authorised). */
  public SnapshotCoordinator snapshots() {
    return snapshots;
  }

  /** Ends a snapshot (administrators). */
  public void endSnapshot(String token, String snapshotId) {
    snapshots.end(caller(token), snapshotId);
  }

  /** Starts checking an import's plan (administrators). */
  public ImportOpening beginImport(String token) {
    return imports.begin(caller(token));
  }

  /** Commits an import (administrators): all of it or nothing. */
  public ImportTables.Committed commitImport(String token, String importId) {
    return imports.commit(caller(token), importId);
  }

  /** Gives an import up (administrators). */
  public void abortImport(String token, String importId) {
    imports.abort(caller(token), importId);
  }

  /** Whether an import is open, committed or neither (backends and administrators). */
  public ImportCoordinator.State importState(String token, String importId) {
    return imports.state(caller(token), importId);
  }

  /**
   * The session of {@code token}; a peer that keeps sending unknown tokens is refused for a while,
   * and a backend whose ID is not registered may call nothing but RegisterBackend.
   */
  private CallerSession caller(String token) {
    return caller(token, false);
  }

  private CallerSession caller(String token, boolean registering) {
    String from = peer.get();
    tokensPerPeer.check(from);
    CallerSession s;
    try {
      s = accounts.authenticate(token);
    } catch (NotAuthenticatedException e) {
      tokensPerPeer.failed(from);
      throw e;
    }
    if (s.backend() && !fromClusterServer.getAsBoolean()) {
      // with TLS a backend's token is not enough: it must come with a server certificate of the cluster
      throw new io.dataclay.exceptions.PermissionDeniedException("a backend session is accepted only from a server"
          + " presenting a certificate of the cluster's CA");
    }
    if (s.backend() && !registering && !registered(s)) {
      // NewBackendSession proves the cluster secret for any ID; only a registered ID gets the rest
      throw new BackendDoesNotExistException("backend " + s.backendId() + " is not registered: its session may"
          + " call RegisterBackend (for itself) and nothing else until it is");
    }
    return s;
  }

  // The Logic Module's own session counts as registered; a backend's once its ID is.
  private boolean registered(CallerSession s) {
    return AccountService.LOGIC_MODULE_ID.equals(s.backendId()) || backends.record(s.backendId()) != null;
  }
}
