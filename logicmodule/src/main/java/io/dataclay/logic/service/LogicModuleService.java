package io.dataclay.logic.service;

import io.dataclay.common.Language;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.MetadataStore;
import io.dataclay.logic.metadata.ModelRecord;
import io.dataclay.logic.metadata.ObjectRecord;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * The Logic Module's logic in plain Java types, one method per RPC. Each method but
 * {@link #health()} and {@link #newSession} first authenticates the caller's {@code token}.
 */
public final class LogicModuleService {
  /** Reported by Health. */
  public static final String VERSION = "0.1.0";

  private final AccountService accounts;
  private final BackendRegistry backends;
  private final ModelService models;
  private final ObjectService objects;
  private final GarbageCollector collector;
  private final CallCounters calls = new CallCounters();
  private final String systemToken;

  /**
   * Serves the metadata in {@code store}; opens the Logic Module's system session (its token
   * stays in memory) used to call backends through {@code backendCalls}.
   */
  public LogicModuleService(MetadataStore store, BackendCalls backendCalls, Duration sessionTtl, long backendTimeoutMs,
      Clock clock) {
    this.accounts = new AccountService(store, sessionTtl, clock);
    this.backends = new BackendRegistry(store, backendTimeoutMs, clock);
    this.systemToken = accounts.openSystemSession();
    this.models = new ModelService(store, backends, backendCalls, () -> systemToken);
    this.objects = new ObjectService(store, accounts, backends, backendCalls, () -> systemToken);
    this.collector = new GarbageCollector(store, accounts, backends, backendCalls, () -> systemToken);
  }

  /** Creates the configured administrator unless an account of that name exists (never changes it). */
  public AccountService.Bootstrap bootstrapAdministrator(String username, String password) {
    return accounts.bootstrapAdministrator(username, password);
  }

  /** Counts one call of an RPC (what GetStats reports). */
  public void countCall(String rpc) {
    calls.count(rpc);
  }

  /** The version string; needs no session. */
  public String health() {
    return VERSION;
  }

  /** Logs in and opens a session; needs no session. */
  public Session newSession(String username, String password, String dataset) {
    return accounts.newSession(username, password, dataset);
  }

  /** Closes the caller's session. */
  public void closeSession(String token) {
    accounts.closeSession(token);
  }

  /** A client's session as seen by an administrator (a backend). */
  public Session validateSession(String token, String clientToken) {
    return accounts.validateSession(accounts.authenticate(token), clientToken);
  }

  /** Creates an account (administrators only). */
  public void newAccount(String token, String username, String password, boolean admin) {
    accounts.newAccount(accounts.authenticate(token), username, password, admin);
  }

  /** Grants a dataset to an account, creating the dataset for the caller when absent. */
  public void newDataContract(String token, String dataset, String beneficiary) {
    accounts.newDataContract(accounts.authenticate(token), dataset, beneficiary);
  }

  /** Registers the next version of a model and starts deploying it; returns it as stored. */
  public ModelRecord registerModel(String token, ModelRecord model) {
    return models.register(accounts.authenticate(token), model);
  }

  /** The model of a namespace. */
  public ModelRecord getModel(String token, String namespace) {
    accounts.authenticate(token);
    return models.get(namespace);
  }

  /** Every model of a language (null: all). */
  public List<ModelRecord> listModels(String token, Language language) {
    accounts.authenticate(token);
    return models.list(language);
  }

  /** Registers or re-registers a backend (administrators only). */
  public void registerBackend(String token, BackendRecord backend) {
    backends.register(accounts.authenticate(token), backend);
  }

  /** Records a backend's heartbeat (administrators only). */
  public void heartbeat(String token, String backendId) {
    backends.heartbeat(accounts.authenticate(token), backendId);
  }

  /** Every registered backend with its liveness. */
  public List<RegisteredBackend> getBackends(String token) {
    accounts.authenticate(token);
    return backends.all();
  }

  /** Registers stored objects and an optional alias in one transaction (administrators only). */
  public void registerObjects(String token, List<ObjectRecord> objectList, String alias, String aliasObjectId) {
    objects.registerObjects(accounts.authenticate(token), objectList, alias, aliasObjectId);
  }

  /** The metadata of an object in one of the caller's datasets. */
  public ObjectRecord getObjectInfo(String token, String id) {
    return objects.info(accounts.authenticate(token), id);
  }

  /** The object an alias names (dataset empty: the session's dataset). */
  public ObjectRecord getObjectByAlias(String token, String alias, String dataset) {
    return objects.byAlias(accounts.authenticate(token), alias, dataset);
  }

  /** Gives an object another alias in its dataset. */
  public void newAlias(String token, String alias, String objectId) {
    objects.newAlias(accounts.authenticate(token), alias, objectId);
  }

  /** Removes an alias (dataset empty: the session's dataset). */
  public void deleteAlias(String token, String alias, String dataset) {
    objects.deleteAlias(accounts.authenticate(token), alias, dataset);
  }

  /** Records replicas on a backend (backends only). */
  public void addReplicas(String token, List<String> ids, String backendId) {
    objects.addReplicas(accounts.authenticate(token), ids, backendId);
  }

  /** Records that a backend dropped replicas (backends only). */
  public void removeReplicas(String token, List<String> ids, String backendId) {
    objects.removeReplicas(accounts.authenticate(token), ids, backendId);
  }

  /** Records moved master copies (backends only). */
  public void setMaster(String token, List<String> ids, String backendId) {
    objects.setMaster(accounts.authenticate(token), ids, backendId);
  }

  /** Forgets objects (backends only). */
  public void unregisterObjects(String token, List<String> ids) {
    objects.unregister(accounts.authenticate(token), ids);
  }

  /** Objects mastered on a backend that have replicas (backends only). */
  public List<ObjectRecord> replicatedObjects(String token, String backendId) {
    return objects.replicatedFrom(accounts.authenticate(token), backendId);
  }

  /** Runs a garbage collection now (administrators only); see {@link GarbageCollector#collect()}. */
  public CollectionResult collectGarbage(String token) {
    accounts.authenticate(token).requireAdmin("CollectGarbage");
    return collector.collect();
  }

  /** Runs a garbage collection on the Logic Module's own behalf (the periodic run). */
  public CollectionResult collectGarbageNow() {
    return collector.collect();
  }

  /** Call counters and metadata totals. */
  public Stats stats(String token) {
    accounts.authenticate(token);
    return new Stats(calls.snapshot(), objects.objectCount(), objects.aliasCount(), accounts.openSessions(),
        collector.collectedTotal());
  }
}
