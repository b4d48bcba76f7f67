package io.dataclay.logic.servicer;

import io.dataclay.exceptions.DataClayException;
import io.dataclay.logic.backends.RegisteredBackend;
import io.dataclay.logic.codec.ProtoMapping;
import io.dataclay.logic.collection.CollectionResult;
import io.dataclay.logic.metadata.ContractRecord;
import io.dataclay.logic.metadata.ObjectGroup;
import io.dataclay.logic.service.LogicModuleService;
import io.dataclay.logic.service.Stats;
import io.dataclay.proto.AliasPage;
import io.dataclay.proto.AliasRequest;
import io.dataclay.proto.BackendIdRequest;
import io.dataclay.proto.BackendInfo;
import io.dataclay.proto.BackendList;
import io.dataclay.proto.BeginSnapshotRequest;
import io.dataclay.proto.DataContractList;
import io.dataclay.proto.DatasetPage;
import io.dataclay.proto.Demotion;
import io.dataclay.proto.Empty;
import io.dataclay.proto.ErrorInfo;
import io.dataclay.proto.GarbageReport;
import io.dataclay.proto.GetModelRequest;
import io.dataclay.proto.HealthResponse;
import io.dataclay.proto.HeartbeatRequest;
import io.dataclay.proto.HeartbeatResponse;
import io.dataclay.proto.ImportOpened;
import io.dataclay.proto.ImportPlanPart;
import io.dataclay.proto.ImportReport;
import io.dataclay.proto.ImportRequest;
import io.dataclay.proto.ImportStateResponse;
import io.dataclay.proto.ListAliasesRequest;
import io.dataclay.proto.ListDatasetsRequest;
import io.dataclay.proto.ListModelsRequest;
import io.dataclay.proto.ListObjectsRequest;
import io.dataclay.proto.LogicModuleGrpc;
import io.dataclay.proto.LogicModuleStats;
import io.dataclay.proto.Model;
import io.dataclay.proto.ModelList;
import io.dataclay.proto.NewAccountRequest;
import io.dataclay.proto.NewAliasRequest;
import io.dataclay.proto.NewBackendSessionRequest;
import io.dataclay.proto.NewDataContractRequest;
import io.dataclay.proto.NewSessionRequest;
import io.dataclay.proto.ObjectIdRequest;
import io.dataclay.proto.ObjectIdsRequest;
import io.dataclay.proto.ObjectInfo;
import io.dataclay.proto.ObjectInfoList;
import io.dataclay.proto.ObjectLocationsRequest;
import io.dataclay.proto.ObjectPage;
import io.dataclay.proto.RegisterObjectsRequest;
import io.dataclay.proto.RegisterObjectsResponse;
import io.dataclay.proto.RemoveModelRequest;
import io.dataclay.proto.RemoveModelResponse;
import io.dataclay.proto.RevokeDataContractRequest;
import io.dataclay.proto.SessionInfo;
import io.dataclay.proto.SetModelPublishedRequest;
import io.dataclay.proto.SetModelRegistrationRequest;
import io.dataclay.proto.SnapshotChunk;
import io.dataclay.proto.SnapshotInfo;
import io.dataclay.proto.SnapshotRequest;
import io.dataclay.proto.ValidateSessionRequest;
import io.dataclay.rpc.GrpcErrors;
import io.dataclay.server.CallLatencies;
import io.dataclay.server.Replies;
import io.dataclay.rpc.SessionMetadata;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;

/**
 * The Logic Module's gRPC adapter: converts messages, lets the service check and run them, and
 * answers errors as status + ErrorInfo trailer (the server counts every call by RPC name).
 */
public final class LogicModuleServicer extends LogicModuleGrpc.LogicModuleImplBase {
  private final LogicModuleService service;
  private final SnapshotServicer snapshots;

  /** An adapter in front of {@code service}. */
  public LogicModuleServicer(LogicModuleService service) {
    this.service = service;
    this.snapshots = new SnapshotServicer(service);
  }

  @Override
  public void health(Empty request, StreamObserver<HealthResponse> out) {
    Replies.now(out, () -> HealthResponse.newBuilder().setVersion(service.health()).build());
  }

  @Override
  public void newSession(NewSessionRequest r, StreamObserver<SessionInfo> out) {
    Replies.now(out, () -> ProtoMapping.toProto(
        service.newSession(r.getUsername(), r.getPassword(), r.getDataset())));
  }

  @Override
  public void newBackendSession(NewBackendSessionRequest r, StreamObserver<SessionInfo> out) {
    Replies.now(out, () -> ProtoMapping.toProto(service.newBackendSession(r.getBackendId(),
        r.getIssuedAtMs(), r.getNonce(), r.getProof().toByteArray())));
  }

  @Override
  public void closeSession(Empty request, StreamObserver<Empty> out) {
    Replies.done(out, () -> service.closeSession(token()));
  }

  @Override
  public void validateSession(ValidateSessionRequest r, StreamObserver<SessionInfo> out) {
    Replies.now(out, () -> ProtoMapping.toProto(service.validateSession(token(), r.getToken())));
  }

  @Override
  public void newAccount(NewAccountRequest r, StreamObserver<Empty> out) {
    Replies.done(out, () -> service.newAccount(token(), r.getUsername(), r.getPassword(), r.getAdmin()));
  }

  @Override
  public void newDataContract(NewDataContractRequest r, StreamObserver<Empty> out) {
    Replies.done(out, () -> service.newDataContract(token(), new ContractRecord(r.getDataset(), "",
        r.getBeneficiary(), r.getReadOnly(), r.getBeginsAtMs(), r.getExpiresAtMs())));
  }

  @Override
  public void revokeDataContract(RevokeDataContractRequest r, StreamObserver<Empty> out) {
    Replies.done(out, () -> service.revokeDataContract(token(), r.getDataset(), r.getBeneficiary()));
  }

  @Override
  public void listDataContracts(Empty r, StreamObserver<DataContractList> out) {
    Replies.now(out, () -> {
      DataContractList.Builder list = DataContractList.newBuilder();
      service.listDataContracts(token()).forEach(c -> list.addContracts(ProtoMapping.toProto(c)));
      return list.build();
    });
  }

  @Override
  public void setModelRegistration(SetModelRegistrationRequest r, StreamObserver<Empty> out) {
    Replies.done(out, () -> service.setModelRegistration(token(), r.getUsername(), r.getAllowed()));
  }

  @Override
  public void registerModel(Model r, StreamObserver<Empty> out) {
    Replies.done(out, () -> service.registerModel(token(), ProtoMapping.toRecord(r)));
  }

  @Override
  public void getModel(GetModelRequest r, StreamObserver<Model> out) {
    Replies.now(out, () -> ProtoMapping.toProto(service.getModel(token(), r.getNamespace())));
  }

  @Override
  public void listModels(ListModelsRequest r, StreamObserver<ModelList> out) {
    Replies.now(out, () -> {
      var catalog = service.listModels(token(), ProtoMapping.languageFilter("language", r.getLanguage()));
      ModelList.Builder list = ModelList.newBuilder().setRevision(catalog.revision());
      catalog.models().forEach(m -> list.addModels(ProtoMapping.toProto(m)));
      return list.build();
    });
  }

  @Override
  public void setModelPublished(SetModelPublishedRequest r, StreamObserver<Empty> out) {
    Replies.done(out, () -> service.setModelPublished(token(), r.getNamespace(), r.getPublished()));
  }

  @Override
  public void removeModel(RemoveModelRequest r, StreamObserver<RemoveModelResponse> out) {
    Replies.now(out, () -> RemoveModelResponse.newBuilder()
        .setObjectsLeft(service.removeModel(token(), r.getNamespace(), r.getForce())).build());
  }

  @Override
  public void registerBackend(BackendInfo r, StreamObserver<Empty> out) {
    Replies.done(out, () -> service.registerBackend(token(), ProtoMapping.toRecord(r)));
  }

  @Override
  public void heartbeat(HeartbeatRequest r, StreamObserver<HeartbeatResponse> out) {
    Replies.now(out, () -> {
      var beat = service.heartbeat(token(), r.getBackendId(), r.getSessionsEpoch(), r.getSessionsSeen(),
          r.getDemotedObjectIdsList());
      var since = beat.sessions();
      var failover = beat.failover();
      HeartbeatResponse.Builder answer = HeartbeatResponse.newBuilder().setSessionsEpoch(since.epoch())
          .setSessionsSeen(since.seen()).addAllClosedTokenSha256(since.closedTokenSha256())
          .setForgetAll(since.forgetAll()).putAllTerms(failover.terms()).setMasterLeaseMs(failover.leaseMs())
          .setMoreDemotions(failover.more()).setModelsRevision(beat.modelsRevision());
      failover.demotions().forEach(d -> answer.addDemotions(Demotion.newBuilder().setObjectId(d.objectId())
          .setMasterBackendId(d.backendId())));
      return answer.build();
    });
  }

  @Override
  public void getBackends(Empty request, StreamObserver<BackendList> out) {
    Replies.now(out, () -> {
      BackendList.Builder list = BackendList.newBuilder();
      for (RegisteredBackend b : service.getBackends(token())) {
        list.addBackends(ProtoMapping.toProto(b));
      }
      return list.build();
    });
  }

  @Override
  public void registerObjects(RegisterObjectsRequest r, StreamObserver<RegisterObjectsResponse> out) {
    Replies.now(out, () -> {
      // a group that cannot even be read (an unknown language) is refused alone, as the service
      // refuses a malformed group: the others are registered all the same
      List<ObjectGroup> readable = new ArrayList<>(r.getGroupsCount());
      ErrorInfo[] outcomes = new ErrorInfo[r.getGroupsCount()];
      for (int g = 0; g < r.getGroupsCount(); g++) {
        try {
          readable.add(ProtoMapping.toGroup(r.getGroups(g), "groups[" + g + "]."));
        } catch (DataClayException e) {
          outcomes[g] = refusal(e);
        }
      }
      Iterator<Optional<DataClayException>> registered = readable.isEmpty() && r.getGroupsCount() > 0
          ? Collections.emptyIterator() : service.registerObjects(token(), readable).iterator();
      RegisterObjectsResponse.Builder answer = RegisterObjectsResponse.newBuilder();
      for (ErrorInfo outcome : outcomes) {
        answer.addOutcomes(outcome != null ? outcome
            : registered.next().map(LogicModuleServicer::refusal).orElse(ErrorInfo.getDefaultInstance()));
      }
      return answer.build();
    });
  }

  private static ErrorInfo refusal(DataClayException e) {
    return ErrorInfo.newBuilder().setCode(GrpcErrors.toWire(e.code())).setMessage(String.valueOf(e.getMessage())).build();
  }

  @Override
  public void getObjectInfo(ObjectIdRequest r, StreamObserver<ObjectInfo> out) {
    Replies.now(out, () -> ProtoMapping.toProto(service.getObjectInfo(token(), r.getId())));
  }

  @Override
  public void getObjectByAlias(AliasRequest r, StreamObserver<ObjectInfo> out) {
    Replies.now(out, () -> ProtoMapping.toProto(
        service.getObjectByAlias(token(), r.getAlias(), r.getDataset())));
  }

  @Override
  public void newAlias(NewAliasRequest r, StreamObserver<Empty> out) {
    Replies.done(out, () -> service.newAlias(token(), r.getAlias(), r.getObjectId()));
  }

  @Override
  public void deleteAlias(AliasRequest r, StreamObserver<Empty> out) {
    Replies.done(out, () -> service.deleteAlias(token(), r.getAlias(), r.getDataset()));
  }

  @Override
  public void listDatasets(ListDatasetsRequest r, StreamObserver<DatasetPage> out) {
    Replies.now(out, () -> {
      var page = service.listDatasets(token(), r.getPageSize(), r.getPageToken(), r.getCountObjects());
      DatasetPage.Builder answer = DatasetPage.newBuilder().setNextPageToken(page.nextPageToken());
      page.items().forEach(d -> answer.addDatasets(ProtoMapping.toProto(d)));
      return answer.build();
    });
  }

  @Override
  public void listAliases(ListAliasesRequest r, StreamObserver<AliasPage> out) {
    Replies.now(out, () -> {
      var page = service.listAliases(token(), r.getPattern(), r.getDataset(), r.getPageSize(), r.getPageToken());
      AliasPage.Builder answer = AliasPage.newBuilder().setNextPageToken(page.nextPageToken());
      page.items().forEach(a -> answer.addAliases(ProtoMapping.toProto(a)));
      return answer.build();
    });
  }

  @Override
  public void listObjects(ListObjectsRequest r, StreamObserver<ObjectPage> out) {
    Replies.now(out, () -> {
      var page = service.listObjects(token(), r.getClassName(), r.getDataset(), r.getVersionOf(), r.getPageSize(),
          r.getPageToken());
      ObjectPage.Builder answer = ObjectPage.newBuilder().setNextPageToken(page.nextPageToken());
      page.items().forEach(o -> answer.addObjects(ProtoMapping.toProto(o)));
      return answer.build();
    });
  }

  @Override
  public void addReplicas(ObjectLocationsRequest r, StreamObserver<Empty> out) {
    Replies.done(out, () -> service.addReplicas(token(), r.getObjectIdsList(), r.getBackendId()));
  }

  @Override
  public void removeReplicas(ObjectLocationsRequest r, StreamObserver<Empty> out) {
    Replies.done(out, () -> service.removeReplicas(token(), r.getObjectIdsList(), r.getBackendId()));
  }

  @Override
  public void setMaster(ObjectLocationsRequest r, StreamObserver<Empty> out) {
    Replies.done(out, () -> service.setMaster(token(), r.getObjectIdsList(), r.getBackendId()));
  }

  @Override
  public void unregisterObjects(ObjectIdsRequest r, StreamObserver<Empty> out) {
    Replies.done(out, () -> service.unregisterObjects(token(), r.getIdsList()));
  }

  @Override
  public void getReplicatedObjects(BackendIdRequest r, StreamObserver<ObjectInfoList> out) {
    Replies.now(out, () -> {
      ObjectInfoList.Builder list = ObjectInfoList.newBuilder();
      service.replicatedObjects(token(), r.getBackendId()).forEach(o -> list.addObjects(ProtoMapping.toProto(o)));
      return list.build();
    });
  }

  @Override
  public void collectGarbage(Empty request, StreamObserver<GarbageReport> out) {
    Replies.now(out, () -> {
      CollectionResult r = service.collectGarbage(token());
      return GarbageReport.newBuilder().setCollected(r.collected()).setExamined(r.examined())
          .setDurationMs(r.durationMs()).build();
    });
  }

  @Override
  public void getStats(Empty request, StreamObserver<LogicModuleStats> out) {
    Replies.now(out, () -> {
      Stats s = service.stats(token());
      LogicModuleStats.Builder answer = LogicModuleStats.newBuilder().putAllCalls(s.calls()).setObjects(s.objects())
          .setAliases(s.aliases()).setOpenSessions(s.openSessions()).setObjectsCollected(s.objectsCollected())
          .putAllLatency(CallLatencies.toProto(s.latency())).putAllSessionsByAccount(s.sessionsByAccount());
      s.events().forEach(e -> answer.addEvents(ProtoMapping.toProto(e)));
      return answer.build();
    });
  }

  @Override
  public void beginSnapshot(BeginSnapshotRequest r, StreamObserver<SnapshotInfo> out) {
    snapshots.beginSnapshot(r, out);
  }

  @Override
  public void exportMetadata(SnapshotRequest r, StreamObserver<SnapshotChunk> out) {
    snapshots.exportMetadata(r, out);
  }

  @Override
  public void endSnapshot(SnapshotRequest r, StreamObserver<Empty> out) {
    snapshots.endSnapshot(r, out);
  }

  @Override
  public StreamObserver<ImportPlanPart> beginImport(StreamObserver<ImportOpened> out) {
    return snapshots.beginImport(out);
  }

  @Override
  public void commitImport(ImportRequest r, StreamObserver<ImportReport> out) {
    snapshots.commitImport(r, out);
  }

  @Override
  public void abortImport(ImportRequest r, StreamObserver<Empty> out) {
    snapshots.abortImport(r, out);
  }

  @Override
  public void getImportState(ImportRequest r, StreamObserver<ImportStateResponse> out) {
    snapshots.getImportState(r, out);
  }

  private static String token() {
    return SessionMetadata.currentToken();
  }
}
