package io.dataclay.client;

import io.dataclay.api.AliasInfo;
import io.dataclay.api.DatasetInfo;
import io.dataclay.api.StoredObject;
import io.dataclay.proto.AliasPage;
import io.dataclay.proto.AliasRequest;
import io.dataclay.proto.BackendIdRequest;
import io.dataclay.proto.BackendInfo;
import io.dataclay.proto.Empty;
import io.dataclay.proto.ErrorCode;
import io.dataclay.proto.ErrorInfo;
import io.dataclay.proto.GarbageReport;
import io.dataclay.proto.GetModelRequest;
import io.dataclay.proto.DataContract;
import io.dataclay.proto.DatasetPage;
import io.dataclay.proto.HeartbeatRequest;
import io.dataclay.proto.HeartbeatResponse;
import io.dataclay.proto.Language;
import io.dataclay.proto.ListAliasesRequest;
import io.dataclay.proto.ListDatasetsRequest;
import io.dataclay.proto.ListModelsRequest;
import io.dataclay.proto.ListObjectsRequest;
import io.dataclay.proto.LogicModuleGrpc;
import io.dataclay.proto.LogicModuleStats;
import io.dataclay.proto.Model;
import io.dataclay.proto.NewAccountRequest;
import io.dataclay.proto.NewAliasRequest;
import io.dataclay.proto.NewBackendSessionRequest;
import io.dataclay.proto.NewDataContractRequest;
import io.dataclay.proto.NewSessionRequest;
import io.dataclay.proto.ObjectIdRequest;
import io.dataclay.proto.ObjectIdsRequest;
import io.dataclay.proto.ObjectInfo;
import io.dataclay.proto.ObjectLocationsRequest;
import io.dataclay.proto.ObjectPage;
import io.dataclay.proto.RegisterObjectsRequest;
import io.dataclay.proto.RegistrationGroup;
import io.dataclay.proto.RevokeDataContractRequest;
import io.dataclay.proto.SetModelRegistrationRequest;
import io.dataclay.proto.SessionInfo;
import io.dataclay.proto.ValidateSessionRequest;
import io.dataclay.rpc.GrpcErrors;
import io.dataclay.rpc.SessionMetadata;
import io.dataclay.rpc.TlsSettings;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The one wrapper around the Logic Module's generated stub. Every call carries the session
 * token from {@code token} and failures surface as {@link io.dataclay.exceptions.DataClayException}s.
 */
public final class LogicModuleClient implements AutoCloseable {
  private final ManagedChannel owned;
  private final LogicModuleGrpc.LogicModuleBlockingStub stub;

  /** A client on a channel it owns (closed by {@link #close()}), secured as {@code tls} says. */
  public LogicModuleClient(String host, int port, TlsSettings tls, Supplier<String> token) {
    this(Channels.forAddress(host, port, tls), true, token);
  }

  /** A client on a channel owned by the caller (tests use in-process channels). */
  public LogicModuleClient(Channel channel, Supplier<String> token) {
    this(channel, false, token);
  }

  private LogicModuleClient(Channel channel, boolean owns, Supplier<String> token) {
    this.owned = owns ? (ManagedChannel) channel : null;
    this.stub = LogicModuleGrpc.newBlockingStub(
        ClientInterceptors.intercept(channel, SessionMetadata.clientInterceptor(token)));
  }

  /** The Logic Module's version, if it answers within {@code timeoutMs}. */
  public String health(long timeoutMs) {
    return RpcCalls.call(() -> stub.withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS)
        .health(Empty.getDefaultInstance()).getVersion());
  }

  /** Opens a session; {@code dataset} may be empty for the user's own dataset. */
  public NewSession newSession(String username, String password, String dataset) {
    return WireRecords.session(RpcCalls.call(() -> stub.newSession(NewSessionRequest.newBuilder()
        .setUsername(username).setPassword(password).setDataset(dataset).build())));
  }

  /** Opens a backend's session with a proof of the cluster secret (see {@link io.dataclay.common.ClusterSecret}). */
  public SessionInfo newBackendSession(String backendId, long issuedAtMs, String nonce, byte[] proof) {
    return RpcCalls.call(() -> stub.newBackendSession(NewBackendSessionRequest.newBuilder()
        .setBackendId(backendId).setIssuedAtMs(issuedAtMs).setNonce(nonce).setProof(ByteString.copyFrom(proof))
        .build()));
  }

  /** Closes the caller's session. */
  public void closeSession() {
    RpcCalls.call(() -> stub.closeSession(Empty.getDefaultInstance()));
  }

  /** What the Logic Module knows of a client's session (backends only). */
  public SessionInfo validateSession(String clientToken) {
    return RpcCalls.call(() -> stub.validateSession(
        ValidateSessionRequest.newBuilder().setToken(clientToken).build()));
  }

  /** Creates an account (administrators only). */
  public void newAccount(String username, String password, boolean admin) {
    RpcCalls.call(() -> stub.newAccount(NewAccountRequest.newBuilder()
        .setUsername(username).setPassword(password).setAdmin(admin).build()));
  }

  /** Grants {@code beneficiary} read-write access to {@code dataset}, creating it for the caller if needed. */
  public void newDataContract(String dataset, String beneficiary) {
    newDataContract(NewDataContractRequest.newBuilder().setDataset(dataset).setBeneficiary(beneficiary).build());
  }

  /** Grants a dataset on the request's terms (read-only, begin and expiry), replacing earlier terms. */
  public void newDataContract(NewDataContractRequest request) {
    RpcCalls.call(() -> stub.newDataContract(request));
  }

  /** Takes back {@code beneficiary}'s contract on a dataset the caller owns. */
  public void revokeDataContract(String dataset, String beneficiary) {
    RpcCalls.call(() -> stub.revokeDataContract(RevokeDataContractRequest.newBuilder()
        .setDataset(dataset).setBeneficiary(beneficiary).build()));
  }

  /** The contracts on the caller's datasets and those granted to it. */
  public List<DataContract> listDataContracts() {
    return RpcCalls.call(() -> stub.listDataContracts(Empty.getDefaultInstance()).getContractsList());
  }

  /**
   * A page of the datasets the caller may see, each with its object count when
   * {@code countObjects} (see the ListDatasets RPC); {@code pageSize} 0: the server's default,
   * {@code pageToken} "": the first page.
   */
  public Page<DatasetInfo> listDatasets(boolean countObjects, int pageSize, String pageToken) {
    DatasetPage page = RpcCalls.call(() -> stub.listDatasets(ListDatasetsRequest.newBuilder()
        .setCountObjects(countObjects).setPageSize(pageSize).setPageToken(nullToEmpty(pageToken)).build()));
    return new Page<>(page.getDatasetsList().stream().map(WireRecords::dataset).toList(), page.getNextPageToken());
  }

  /**
   * A page of the aliases matching {@code pattern} (null: all) in {@code dataset} (null: every
   * dataset the caller may see); see the ListAliases RPC.
   */
  public Page<AliasInfo> listAliases(String pattern, String dataset, int pageSize, String pageToken) {
    AliasPage page = RpcCalls.call(() -> stub.listAliases(ListAliasesRequest.newBuilder().setPattern(nullToEmpty(pattern))
        .setDataset(nullToEmpty(dataset)).setPageSize(pageSize).setPageToken(nullToEmpty(pageToken)).build()));
    return new Page<>(page.getAliasesList().stream().map(WireRecords::alias).toList(), page.getNextPageToken());
  }

  /**
   * A page of the objects of {@code className} (null: every class) in {@code dataset} (null: every
   * dataset the caller may see); see the ListObjects RPC.
   */
  public Page<StoredObject> listObjects(String className, String dataset, int pageSize, String pageToken) {
    ObjectPage page = RpcCalls.call(() -> stub.listObjects(ListObjectsRequest.newBuilder()
        .setClassName(nullToEmpty(className)).setDataset(nullToEmpty(dataset)).setPageSize(pageSize)
        .setPageToken(nullToEmpty(pageToken)).build()));
    return new Page<>(page.getObjectsList().stream().map(WireRecords::object).toList(), page.getNextPageToken());
  }

  /** Lets an account register models, or stops it (administrators only). */
  public void setModelRegistration(String username, boolean allowed) {
    RpcCalls.call(() -> stub.setModelRegistration(SetModelRegistrationRequest.newBuilder()
        .setUsername(username).setAllowed(allowed).build()));
  }

  /** Registers (or updates) a model and deploys it to every live backend. */
  public void registerModel(Model model) {
    RpcCalls.call(() -> stub.registerModel(model));
  }

  /** The registered model of a namespace. */
  public Model getModel(String namespace) {
    return RpcCalls.call(() -> stub.getModel(GetModelRequest.newBuilder().setNamespace(namespace).build()));
  }

  /** The registered models of a language ({@code LANGUAGE_UNSPECIFIED}: all) the caller may read. */
  public List<Model> listModels(Language language) {
    return listModelsWithRevision(language).getModelsList();
  }

  /** {@link #listModels} with the last model change the list includes (set for backends asking for all). */
  public io.dataclay.proto.ModelList listModelsWithRevision(Language language) {
    return RpcCalls.call(() -> stub.listModels(ListModelsRequest.newBuilder().setLanguage(language).build()));
  }

  /** Publishes a model (every account may use it) or takes that back; its owner or an administrator. */
  public void setModelPublished(String namespace, boolean published) {
    RpcCalls.call(() -> stub.setModelPublished(io.dataclay.proto.SetModelPublishedRequest.newBuilder()
        .setNamespace(namespace).setPublished(published).build()));
  }

  /**
   * Removes a model from every backend (its owner or an administrator); refused while objects of its
   * classes exist unless {@code force}. Returns the objects of its classes left behind.
   */
  public long removeModel(String namespace, boolean force) {
    return RpcCalls.call(() -> stub.removeModel(io.dataclay.proto.RemoveModelRequest.newBuilder()
        .setNamespace(namespace).setForce(force).build())).getObjectsLeft();
  }

  /** Registers or re-registers a backend under its stable ID. */
  public void registerBackend(BackendInfo backend) {
    RpcCalls.call(() -> stub.registerBackend(backend));
  }

  /**
   * Tells the Logic Module the backend is alive; answers the sessions closed since the backend's
   * last view ({@code sessionsEpoch}, {@code sessionsSeen}: those of the previous answer, 0 at first).
   */
  public HeartbeatResponse heartbeat(String backendId, long sessionsEpoch, long sessionsSeen,
      List<String> demotedObjectIds) {
    return RpcCalls.call(() -> stub.heartbeat(HeartbeatRequest.newBuilder().setBackendId(backendId)
        .setSessionsEpoch(sessionsEpoch).setSessionsSeen(sessionsSeen).addAllDemotedObjectIds(demotedObjectIds)
        .build()));
  }

  /** Every registered backend with its liveness, as the client runtime sees it. */
  public List<io.dataclay.api.BackendInfo> backends() {
    return getBackends().stream().map(WireRecords::backend).toList();
  }

  /**
   * {@link #backends()} as the wire carries it, store engine included: for the servers, which
   * still pass these messages on.
   */
  public List<BackendInfo> getBackends() {
    return RpcCalls.call(() -> stub.getBackends(Empty.getDefaultInstance()).getBackendsList());
  }

  /**
   * Registers groups of stored objects (backends only), each all or nothing with its alias and
   * independently of the others; one outcome per group, in order (code ERROR_UNSPECIFIED: registered).
   */
  public List<ErrorInfo> registerGroups(List<RegistrationGroup> groups) {
    return RpcCalls.call(() -> stub.registerObjects(RegisterObjectsRequest.newBuilder().addAllGroups(groups).build()))
        .getOutcomesList();
  }

  /**
   * Registers stored objects and, optionally, an alias for one of them, as one group.
   *
   * @throws io.dataclay.exceptions.DataClayException why the group was refused; nothing of it is registered
   */
  public void registerObjects(List<ObjectInfo> objects, String alias, String aliasObjectId) {
    ErrorInfo outcome = registerGroups(List.of(RegistrationGroup.newBuilder()
        .addAllObjects(objects)
        .setAlias(alias == null ? "" : alias)
        .setAliasObjectId(aliasObjectId == null ? "" : aliasObjectId)
        .build())).get(0);
    if (outcome.getCode() != ErrorCode.ERROR_UNSPECIFIED) {
      throw GrpcErrors.fromInfo(outcome);
    }
  }

  /** Metadata of an object. */
  public StoredObject getObjectInfo(String id) {
    return WireRecords.object(RpcCalls.call(() -> stub.getObjectInfo(ObjectIdRequest.newBuilder().setId(id).build())));
  }

  /** Metadata of the object with an alias; {@code dataset} empty means the session's dataset. */
  public StoredObject getObjectByAlias(String alias, String dataset) {
    return WireRecords.object(RpcCalls.call(() -> stub.getObjectByAlias(
        AliasRequest.newBuilder().setAlias(alias).setDataset(dataset == null ? "" : dataset).build())));
  }

  /** Gives an existing object an alias in its dataset. */
  public void newAlias(String alias, String objectId) {
    RpcCalls.call(() -> stub.newAlias(NewAliasRequest.newBuilder().setAlias(alias).setObjectId(objectId).build()));
  }

  /** Removes an alias; {@code dataset} empty means the session's dataset. */
  public void deleteAlias(String alias, String dataset) {
    RpcCalls.call(() -> stub.deleteAlias(
        AliasRequest.newBuilder().setAlias(alias).setDataset(dataset == null ? "" : dataset).build()));
  }

  /** Call counters and totals. */
  public LogicModuleStats getStats() {
    return RpcCalls.call(() -> stub.getStats(Empty.getDefaultInstance()));
  }

  /** Records that {@code backendId} holds replicas of the objects (backends only). */
  public void addReplicas(List<String> objectIds, String backendId) {
    RpcCalls.call(() -> stub.addReplicas(locations(objectIds, backendId)));
  }

  /** Records that {@code backendId} no longer holds replicas of the objects (backends only). */
  public void removeReplicas(List<String> objectIds, String backendId) {
    RpcCalls.call(() -> stub.removeReplicas(locations(objectIds, backendId)));
  }

  /** Records that the master copies of the objects are now on {@code backendId} (backends only). */
  public void setMaster(List<String> objectIds, String backendId) {
    RpcCalls.call(() -> stub.setMaster(locations(objectIds, backendId)));
  }

  /** Forgets objects, their replicas and aliases (backends and the collector only). */
  public void unregisterObjects(List<String> objectIds) {
    RpcCalls.call(() -> stub.unregisterObjects(ObjectIdsRequest.newBuilder().addAllIds(objectIds).build()));
  }

  /** Objects mastered on {@code backendId} that have replicas, with their replica locations. */
  public List<StoredObject> getReplicatedObjects(String backendId) {
    return RpcCalls.call(() -> stub.getReplicatedObjects(
        BackendIdRequest.newBuilder().setBackendId(backendId).build())).getObjectsList().stream()
        .map(WireRecords::object).toList();
  }

  /** Runs a garbage collection now (administrators). */
  public GarbageReport collectGarbage() {
    return RpcCalls.call(() -> stub.collectGarbage(Empty.getDefaultInstance()));
  }

  /** What the Logic Module knows of an import (backends only: they settle what they staged for it). */
  public io.dataclay.proto.ImportState getImportState(String importId) {
    return RpcCalls.call(() -> stub.getImportState(
        io.dataclay.proto.ImportRequest.newBuilder().setImportId(importId).build())).getState();
  }

  private static ObjectLocationsRequest locations(List<String> objectIds, String backendId) {
    return ObjectLocationsRequest.newBuilder().addAllObjectIds(objectIds).setBackendId(backendId).build();
  }

  @Override
  public void close() {
    if (owned != null) {
      Channels.close(owned);
    }
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }
}
