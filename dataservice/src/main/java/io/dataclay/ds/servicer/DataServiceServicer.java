package io.dataclay.ds.servicer;

import com.google.protobuf.UnsafeByteOperations;
import io.dataclay.common.Language;
import io.dataclay.ds.codec.Messages;
import io.dataclay.ds.collection.ReferenceRecorder;
import io.dataclay.ds.deployment.ModelService;
import io.dataclay.ds.environments.EnvironmentStatus;
import io.dataclay.ds.execution.ExecutionService;
import io.dataclay.ds.models.ModelBundle;
import io.dataclay.ds.objects.ObjectService;
import io.dataclay.ds.replication.CopyResult;
import io.dataclay.ds.replication.CopyService;
import io.dataclay.ds.replication.ObjectCopy;
import io.dataclay.ds.replication.VersionService;
import io.dataclay.ds.session.InlineCall;
import io.dataclay.ds.session.Permissions;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.session.SessionCache;
import io.dataclay.ds.status.BackendIdentity;
import io.dataclay.ds.status.BackendReport;
import io.dataclay.ds.status.StatusService;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoreStats;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.proto.ApplyDeltasRequest;
import io.dataclay.proto.BackendInfo;
import io.dataclay.proto.BackendStatus;
import io.dataclay.proto.CallMethodRequest;
import io.dataclay.proto.CallMethodResponse;
import io.dataclay.proto.CallPort;
import io.dataclay.proto.CollectionBarrier;
import io.dataclay.proto.CollectionRequest;
import io.dataclay.proto.ConsolidateVersionRequest;
import io.dataclay.proto.CopiedObject;
import io.dataclay.proto.CopiesResponse;
import io.dataclay.proto.DataServiceGrpc;
import io.dataclay.proto.DeleteObjectsRequest;
import io.dataclay.proto.Empty;
import io.dataclay.proto.ExecutionEnvironmentStatus;
import io.dataclay.proto.FinishImportRequest;
import io.dataclay.proto.FlushAllResponse;
import io.dataclay.proto.FreezeRequest;
import io.dataclay.proto.FreezeResponse;
import io.dataclay.proto.GetFieldRequest;
import io.dataclay.proto.GetFieldResponse;
import io.dataclay.proto.GetObjectsRequest;
import io.dataclay.proto.GetObjectsResponse;
import io.dataclay.proto.ImportChunk;
import io.dataclay.proto.ImportReceipt;
import io.dataclay.proto.ImportRequest;
import io.dataclay.proto.MakePersistentRequest;
import io.dataclay.proto.ModelList;
import io.dataclay.proto.MoveRequest;
import io.dataclay.proto.NewReplicaRequest;
import io.dataclay.proto.NewVersionRequest;
import io.dataclay.proto.NewVersionResponse;
import io.dataclay.proto.ObjectData;
import io.dataclay.proto.ObjectInfo;
import io.dataclay.proto.PromoteReplicasRequest;
import io.dataclay.proto.PromotedObject;
import io.dataclay.proto.ReferenceBatch;
import io.dataclay.proto.RemoveModelsRequest;
import io.dataclay.proto.SessionsClosedRequest;
import io.dataclay.proto.SetFieldRequest;
import io.dataclay.proto.SnapshotChunk;
import io.dataclay.proto.SnapshotRequest;
import io.dataclay.proto.StagedObjects;
import io.dataclay.proto.StoreCopiesRequest;
import io.dataclay.proto.StoreStatus;
import io.dataclay.rpc.SessionMetadata;
import io.dataclay.server.CallLatencies;
import io.dataclay.server.Replies;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;

/**
 * The DataService gRPC adapter: validates every field (INVALID_ARGUMENT names the bad one),
 * resolves the caller's session, converts to plain types and calls the service (the server counts
 * every call by RPC name).
 */
public final class DataServiceServicer extends DataServiceGrpc.DataServiceImplBase {
  private static final int INLINE_PERSIST_BYTES = 64 << 10;

  private final SessionCache sessions;
  private final ObjectService objects;
  private final ExecutionService execution;
  private final ModelService models;
  private final StatusService status;
  private final Executor blocking;
  private final CopyService copies;
  private final VersionService versions;
  private final ReferenceRecorder recorder;
  private final BooleanSupplier fromClusterServer;
  private final SnapshotRpcs snapshots;
  private final IntSupplier callPort;

  /**
   * The adapter over the Data Service's logic; work that may block on an inline call goes to
   * {@code blocking}. {@code fromClusterServer} says whether the caller of the call being served
   * proved to be one of the cluster's servers (a CA-verified certificate; always true without TLS):
   * a backend session is accepted only from one. Snapshots and imports go to {@code snapshots}.
   * {@code callPort} is the port of the call port (0 while it is not served).
   */
  public DataServiceServicer(SessionCache sessions, ObjectService objects, ExecutionService execution,
      ModelService models, StatusService status, Executor blocking, CopyService copies,
      VersionService versions, ReferenceRecorder recorder, BooleanSupplier fromClusterServer, SnapshotRpcs snapshots,
      IntSupplier callPort) {
    this.callPort = callPort;
    this.fromClusterServer = fromClusterServer;
    this.snapshots = snapshots;
    this.blocking = blocking;
    this.copies = copies;
    this.versions = versions;
    this.recorder = recorder;
    this.sessions = sessions;
    this.objects = objects;
    this.execution = execution;
    this.models = models;
    this.status = status;
  }

  @Override
  public void makePersistent(MakePersistentRequest request, StreamObserver<Empty> observer) {
    Session session;
    try {
      session = caller();
    } catch (RuntimeException e) {
      Replies.fail(observer, e);
      return;
    }
    // Inline (on the network thread) only what cannot wait: a big graph takes a while to store,
    // some engines wait on a database, and a class not known here yet waits for the models to be
    // installed or fetched. The Logic Module's answer is not waited for on any thread: the reply
    // goes when the registration completes.
    if (InlineCall.active() && (request.getSerializedSize() > INLINE_PERSIST_BYTES
        || !objects.writesWithoutWaiting() || !classesKnownNow(request) || !referencesKnownNow(request))) {
      blocking.execute(() -> persist(session, request, observer));
    } else {
      persist(session, request, observer);
    }
  }

  /** Whether every object's class is usable here without waiting (false also for a bad language: the pool says why). */
  private boolean classesKnownNow(MakePersistentRequest request) {
    for (ObjectData o : request.getObjectsList()) {
      Language language = switch (o.getHeader().getLanguage()) {
        case PYTHON -> Language.PYTHON;
        case JAVA -> Language.JAVA;
        default -> null;
      };
      if (language == null || !objects.classKnownNow(language, o.getHeader().getClassName())) {
        return false;
      }
    }
    return true;
  }

  /** Whether the objects referenced are checked without asking the Logic Module (false also for a bad ID). */
  private boolean referencesKnownNow(MakePersistentRequest request) {
    Set<UUID> created = new HashSet<>();
    List<UUID> refs = new ArrayList<>();
    try {
      for (ObjectData o : request.getObjectsList()) {
        created.add(UUID.fromString(o.getId()));
        for (io.dataclay.proto.Field f : o.getFieldsList()) {
          for (String r : f.getReferencesList()) {
            refs.add(UUID.fromString(r));
          }
        }
      }
    } catch (IllegalArgumentException malformed) {
      return false; // the pool's conversion says what is wrong
    }
    return refs.isEmpty() || objects.referencesDecidedNow(refs, created);
  }

  private void persist(Session session, MakePersistentRequest request, StreamObserver<Empty> observer) {
    Replies.later(observer, () -> {
      List<StoredObject> stored = Messages.storedObjects(request.getObjectsList(), "objects");
      String alias = request.getAlias().isEmpty() ? null : Messages.name(request.getAlias(), "alias");
      return objects.makePersistent(session, stored, alias);
    }, registered -> Empty.getDefaultInstance());
  }

  @Override
  public void callMethod(CallMethodRequest request, StreamObserver<CallMethodResponse> observer) {
    Replies.later(observer, () -> ObjectCalls.callMethod(execution, caller(), request, SessionMetadata.currentCallIsNested()),
        value -> CallMethodResponse.newBuilder().setResult(UnsafeByteOperations.unsafeWrap(value)).build());
  }

  @Override
  public void getField(GetFieldRequest request, StreamObserver<GetFieldResponse> observer) {
    Replies.later(observer, () -> ObjectCalls.getField(execution, caller(), request, SessionMetadata.currentCallIsNested()),
        value -> GetFieldResponse.newBuilder().setValue(UnsafeByteOperations.unsafeWrap(value)).build());
  }

  @Override
  public void setField(SetFieldRequest request, StreamObserver<Empty> observer) {
    Replies.later(observer, () -> ObjectCalls.setField(execution, caller(), request, SessionMetadata.currentCallIsNested()),
        value -> Empty.getDefaultInstance());
  }

  @Override
  public void getCallPort(Empty request, StreamObserver<CallPort> observer) {
    Replies.now(observer, () -> {
      if (caller().backend()) {
        throw new PermissionDeniedException("the call port serves users' sessions; backends call over gRPC");
      }
      return CallPort.newBuilder().setPort(callPort.getAsInt()).build();
    });
  }

  @Override
  public void getObjects(GetObjectsRequest request, StreamObserver<GetObjectsResponse> observer) {
    Replies.now(observer, () -> {
      List<UUID> ids = new ArrayList<>(request.getIdsCount());
      for (int i = 0; i < request.getIdsCount(); i++) {
        ids.add(Messages.uuid(request.getIds(i), "ids[" + i + "]"));
      }
      GetObjectsResponse.Builder out = GetObjectsResponse.newBuilder();
      for (StoredObject o : objects.getObjects(caller(), ids)) {
        out.addObjects(Messages.objectData(o));
      }
      return out.build();
    });
  }

  @Override
  public void deployModels(ModelList request, StreamObserver<Empty> observer) {
    Replies.done(observer, () -> {
      List<ModelBundle> bundles = new ArrayList<>(request.getModelsCount());
      for (int i = 0; i < request.getModelsCount(); i++) {
        bundles.add(Messages.bundle(request.getModels(i), "models[" + i + "]"));
      }
      models.deploy(caller(), bundles);
    });
  }

  @Override
  public void removeModels(RemoveModelsRequest request, StreamObserver<Empty> observer) {
    Replies.done(observer, () -> {
      Session session = caller();
      List<String> namespaces = new ArrayList<>(request.getNamespacesCount());
      for (int i = 0; i < request.getNamespacesCount(); i++) {
        namespaces.add(Messages.name(request.getNamespaces(i), "namespaces[" + i + "]"));
      }
      if (request.getRevision() < 0) {
        throw new InvalidArgumentException("revision is never negative, not " + request.getRevision());
      }
      models.remove(session, namespaces, request.getRevision());
    });
  }

  @Override
  public void sessionsClosed(SessionsClosedRequest request, StreamObserver<Empty> observer) {
    Replies.done(observer, () -> {
      Permissions.requireBackend(caller(), "SessionsClosed");
      if (request.getForgetAll()) {
        sessions.forgetAll();
      } else {
        for (int i = 0; i < request.getTokenSha256Count(); i++) {
          String hash = request.getTokenSha256(i);
          if (hash.length() != 64 || !hash.chars().allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            throw new InvalidArgumentException("token_sha256[" + i + "] must be 64 lower-case hex digits");
          }
        }
        sessions.revoke(request.getTokenSha256List());
      }
    });
  }

  @Override
  public void getStatus(Empty request, StreamObserver<BackendStatus> observer) {
    Replies.now(observer, () -> {
      Session session = caller();
      if (!session.admin() && !session.backend()) {
        throw new PermissionDeniedException("GetStatus is for administrators and the cluster's backends; "
            + session.username() + " is neither");
      }
      return toProto(status.report(), recorder.collected());
    });
  }

  @Override
  public void flushAll(Empty request, StreamObserver<FlushAllResponse> observer) {
    Replies.now(observer, () -> FlushAllResponse.newBuilder().setEnvironments(execution.unloadIdle(caller())).build());
  }

  @Override
  public void newReplica(NewReplicaRequest request, StreamObserver<CopiesResponse> observer) {
    Replies.now(observer, () -> copiesResponse(copies.newReplica(caller(), ids(request.getObjectIdsList()),
        optionalBackend(request.getBackendId()), request.getRecursive())));
  }

  @Override
  public void newVersion(NewVersionRequest request, StreamObserver<NewVersionResponse> observer) {
    Replies.now(observer, () -> {
      UUID id = Messages.uuid(request.getObjectId(), "object_id");
      VersionService.NewVersion v = versions.newVersion(caller(), id, optionalBackend(request.getBackendId()));
      ObjectHeader h = v.version().header();
      ObjectInfo info = ObjectInfo.newBuilder().setId(v.version().id().toString()).setClassName(h.className())
          .setLanguage(Messages.language(h.language())).setDataset(h.dataset()).setMasterBackendId(v.backendId())
          .setVersionOf(h.versionOf()).build();
      return NewVersionResponse.newBuilder().setVersion(info).setBytesSent(v.bytesSent()).build();
    });
  }

  @Override
  public void consolidateVersion(ConsolidateVersionRequest request, StreamObserver<Empty> observer) {
    Replies.done(observer,
        () -> versions.consolidate(caller(), Messages.uuid(request.getVersionId(), "version_id")));
  }

  @Override
  public void move(MoveRequest request, StreamObserver<CopiesResponse> observer) {
    Replies.now(observer, () -> copiesResponse(copies.move(caller(), ids(request.getObjectIdsList()),
        optionalBackend(request.getBackendId()), request.getRecursive(), request.getLocalOnly())));
  }

  @Override
  public void storeCopies(StoreCopiesRequest request, StreamObserver<Empty> observer) {
    Replies.done(observer, () -> {
      List<ObjectCopy> in = new ArrayList<>(request.getObjectsCount());
      for (int i = 0; i < request.getObjectsCount(); i++) {
        CopiedObject c = request.getObjects(i);
        StoredObject o = Messages.storedObject(c.getObject(), "objects[" + i + "].object");
        List<String> replicas = new ArrayList<>(c.getReplicaBackendIdsCount());
        for (int r = 0; r < c.getReplicaBackendIdsCount(); r++) {
          replicas.add(Messages.uuid(c.getReplicaBackendIds(r), "objects[" + i + "].replica_backend_ids[" + r + "]")
              .toString());
        }
        in.add(new ObjectCopy(o, Set.copyOf(replicas)));
      }
      copies.storeCopies(caller(), in, request.getSenderTerm());
    });
  }

  @Override
  public void applyDeltas(ApplyDeltasRequest request, StreamObserver<Empty> observer) {
    Replies.done(observer, () -> {
      List<ObjectDelta> deltas = new ArrayList<>(request.getDeltasCount());
      List<ObjectDelta> states = new ArrayList<>();
      for (int i = 0; i < request.getDeltasCount(); i++) {
        io.dataclay.proto.ObjectDelta d = request.getDeltas(i);
        if (d.getWholeState()) {
          states.add(Messages.wholeStateOf(d, "deltas[" + i + "]"));
        } else {
          deltas.add(Messages.delta(d, "deltas[" + i + "]").delta());
        }
      }
      Session session = caller();
      if (!deltas.isEmpty()) {
        copies.applyDeltas(session, deltas, request.getSenderTerm());
      }
      if (!states.isEmpty()) {
        copies.replaceStates(session, states, request.getSenderTerm());
      }
    });
  }

  @Override
  public void promoteReplicas(PromoteReplicasRequest request, StreamObserver<Empty> observer) {
    Replies.done(observer, () -> {
      Map<UUID, Set<String>> promoted = new LinkedHashMap<>();
      for (int i = 0; i < request.getObjectsCount(); i++) {
        PromotedObject o = request.getObjects(i);
        Set<String> followers = new HashSet<>();
        for (int r = 0; r < o.getReplicaBackendIdsCount(); r++) {
          followers.add(Messages.uuid(o.getReplicaBackendIds(r), "objects[" + i + "].replica_backend_ids[" + r + "]")
              .toString());
        }
        if (promoted.put(Messages.uuid(o.getObjectId(), "objects[" + i + "].object_id"), followers) != null) {
          throw new InvalidArgumentException("objects[" + i + "].object_id: " + o.getObjectId() + " appears twice");
        }
      }
      for (Map.Entry<String, Long> t : request.getTermsMap().entrySet()) {
        Messages.uuid(t.getKey(), "terms key");
        if (t.getValue() < 0) {
          throw new InvalidArgumentException("terms[" + t.getKey() + "]: a term is never negative, not " + t.getValue());
        }
      }
      copies.promote(caller(), promoted, request.getTermsMap());
    });
  }

  @Override
  public void deleteObjects(DeleteObjectsRequest request, StreamObserver<Empty> observer) {
    Replies.done(observer, () -> {
      Session session = caller();
      recorder.deleted(session, copies.deleteObjects(session, ids(request.getObjectIdsList())));
    });
  }

  private static List<UUID> ids(List<String> texts) {
    List<UUID> ids = new ArrayList<>(texts.size());
    for (int i = 0; i < texts.size(); i++) {
      ids.add(Messages.uuid(texts.get(i), "object_ids[" + i + "]"));
    }
    return ids;
  }

  private static String optionalBackend(String text) {
    return text.isEmpty() ? null : Messages.uuid(text, "backend_id").toString();
  }

  private static CopiesResponse copiesResponse(CopyResult r) {
    CopiesResponse.Builder out = CopiesResponse.newBuilder().setBackendId(r.backendId()).setBytesSent(r.bytesSent());
    r.ids().forEach(id -> out.addObjectIds(id.toString()));
    return out.build();
  }

  @Override
  public void beginCollection(CollectionRequest request, StreamObserver<Empty> observer) {
    Replies.done(observer, () -> recorder.begin(caller(), request.getCollectionId()));
  }

  @Override
  public void getReferences(CollectionRequest request, StreamObserver<ReferenceBatch> observer) {
    Iterator<List<ReferenceRecorder.Outgoing>> batches;
    try {
      batches = recorder.references(caller(), request.getCollectionId());
    } catch (RuntimeException e) {
      Replies.fail(observer, e);
      return;
    }
    CollectionReplies.stream(observer, batches);
  }

  @Override
  public void endCollection(CollectionRequest request, StreamObserver<CollectionBarrier> observer) {
    Replies.now(observer, () -> CollectionReplies.barrier(recorder.end(caller(), request.getCollectionId())));
  }

  @Override
  public void freezeWrites(FreezeRequest request, StreamObserver<FreezeResponse> observer) {
    snapshots.freezeWrites(request, observer, this::caller);
  }

  @Override
  public void thawWrites(SnapshotRequest request, StreamObserver<Empty> observer) {
    snapshots.thawWrites(request, observer, this::caller);
  }

  @Override
  public void endSnapshot(SnapshotRequest request, StreamObserver<Empty> observer) {
    snapshots.endSnapshot(request, observer, this::caller);
  }

  @Override
  public void exportObjects(SnapshotRequest request, StreamObserver<SnapshotChunk> observer) {
    snapshots.exportObjects(request, observer, this::caller);
  }

  @Override
  public StreamObserver<ImportChunk> importObjects(StreamObserver<ImportReceipt> observer) {
    return snapshots.importObjects(observer, this::caller);
  }

  @Override
  public void prepareImport(ImportRequest request, StreamObserver<StagedObjects> observer) {
    snapshots.prepareImport(request, observer, this::caller);
  }

  @Override
  public void finishImport(FinishImportRequest request, StreamObserver<Empty> observer) {
    snapshots.finishImport(request, observer, this::caller);
  }

  private Session caller() {
    Session inline = InlineCall.session();
    Session s = inline != null ? inline : sessions.resolve(SessionMetadata.currentToken(), SessionMetadata.currentPeer());
    if (s.backend() && !fromClusterServer.getAsBoolean()) {
      // with TLS a backend's token is not enough: it must come with a server certificate of the cluster
      throw new PermissionDeniedException("a backend session is accepted only from a server presenting a"
          + " certificate of the cluster's CA");
    }
    return s;
  }

  private static BackendStatus toProto(BackendReport report, long collected) {
    BackendIdentity id = report.backend();
    BackendInfo.Builder backend = BackendInfo.newBuilder()
        .setId(id.id().toString()).setName(id.name()).setHost(id.host()).setPort(id.port())
        .setAlive(true).setStoreEngine(id.storeEngine());
    id.languages().forEach(l -> backend.addLanguages(Messages.language(l)));
    StoreStats s = report.store();
    StoreStatus.Builder store = StoreStatus.newBuilder()
        .setEngine(s.engine()).setDurability(s.durability()).setPath(s.path() == null ? "" : s.path())
        .setCapacityBytes(s.capacityBytes()).setUsedBytes(s.usedBytes()).setObjects(s.objects())
        .setObjectsCollected(collected).setEncrypted(s.encrypted());
    BackendStatus.Builder out = BackendStatus.newBuilder().setBackend(backend).setStore(store)
        .putAllCalls(report.calls()).putAllLatency(CallLatencies.toProto(report.latency()))
        .setJitCompileMs(report.jitCompileMs());
    for (EnvironmentStatus e : report.environments()) {
      ExecutionEnvironmentStatus.Builder env = ExecutionEnvironmentStatus.newBuilder()
          .setLanguage(Messages.language(e.language())).setAlive(e.alive()).setPid((int) e.pid())
          .setRestarts(e.restarts()).setCalls(e.calls()).setConfinement(e.confinement()).setProblem(e.problem());
      for (EnvironmentStatus.Process p : e.processes()) {
        env.addProcesses(io.dataclay.proto.EnvironmentProcess.newBuilder().setAccount(p.account())
            .setPid((int) p.pid()).setAlive(p.alive()).setRestarts(p.restarts()).setCalls(p.calls())
            .setCallsInFlight(p.inFlight()).setConfinement(p.confinement()));
      }
      out.addEnvironments(env);
    }
    return out.build();
  }
}
