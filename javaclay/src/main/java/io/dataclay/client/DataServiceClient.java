package io.dataclay.client;

import com.google.protobuf.ByteString;
import io.dataclay.proto.ApplyDeltasRequest;
import io.dataclay.proto.BackendStatus;
import io.dataclay.proto.CallFrame;
import io.dataclay.proto.CallMethodRequest;
import io.dataclay.proto.CollectionBarrier;
import io.dataclay.proto.CollectionRequest;
import io.dataclay.proto.ConsolidateVersionRequest;
import io.dataclay.proto.CopiedObject;
import io.dataclay.proto.DeleteObjectsRequest;
import io.dataclay.proto.DataServiceGrpc;
import io.dataclay.proto.Empty;
import io.dataclay.proto.GetFieldRequest;
import io.dataclay.proto.GetObjectsRequest;
import io.dataclay.proto.MakePersistentRequest;
import io.dataclay.proto.Model;
import io.dataclay.proto.ModelList;
import io.dataclay.proto.MoveRequest;
import io.dataclay.proto.NewReplicaRequest;
import io.dataclay.proto.NewVersionRequest;
import io.dataclay.proto.ObjectData;
import io.dataclay.proto.ObjectDelta;
import io.dataclay.proto.ObjectReferences;
import io.dataclay.proto.PromoteReplicasRequest;
import io.dataclay.proto.PromotedObject;
import io.dataclay.proto.SetFieldRequest;
import io.dataclay.proto.StoreCopiesRequest;
import io.dataclay.rpc.SessionMetadata;
import io.dataclay.rpc.TlsSettings;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The one wrapper around a Data Service's generated stub. Every call carries the session token
 * from {@code token}; failures surface as {@link io.dataclay.exceptions.DataClayException}s.
 */
public final class DataServiceClient implements AutoCloseable {
  private final ManagedChannel owned;
  private final DataServiceGrpc.DataServiceBlockingStub stub;
  private final Supplier<String> token;
  private final CallPortLookup calls; // null: every call over gRPC

  /** A client on a channel it owns (closed by {@link #close()}), secured as {@code tls} says. */
  public DataServiceClient(String host, int port, TlsSettings tls, Supplier<String> token) {
    this(Channels.forAddress(host, port, tls), true, token, null);
  }

  /** A client on a channel owned by the caller. */
  public DataServiceClient(Channel channel, Supplier<String> token) {
    this(channel, false, token, null);
  }

  private DataServiceClient(Channel channel, boolean owns, Supplier<String> token, CallPortLookup calls) {
    this.owned = owns ? (ManagedChannel) channel : null;
    this.stub = DataServiceGrpc.newBlockingStub(
        ClientInterceptors.intercept(channel, SessionMetadata.clientInterceptor(token)));
    this.token = token;
    this.calls = calls;
  }

  /**
   * A user client's: as {@link #DataServiceClient(String, int, TlsSettings, Supplier)}, but method
   * calls and field reads and writes go through the backend's call port when it serves one (a
   * frame on a socket of the calling thread costs less than a gRPC call), else over gRPC. Servers
   * keep to gRPC: their calls are traced, and relayed calls carry another session. So does a program
   * that is traced ({@link CallPortLookup#traced}): its calls are spans of grpc-java's.
   */
  public static DataServiceClient withCallPort(String host, int port, TlsSettings tls, Supplier<String> token) {
    CallPortLookup calls = CallPortLookup.traced(System.getenv()) ? null : new CallPortLookup(host, tls);
    return new DataServiceClient(Channels.forAddress(host, port, tls), true, token, calls);
  }

  // The answer to a call through the call port, or null when it is not used (the caller then makes
  // the call over gRPC).
  private byte[] framed(CallFrame.Builder frame) {
    if (calls == null) {
      return null;
    }
    String session = token.get();
    if (session == null || session.isEmpty()) {
      return null;
    }
    CallPort port = calls.port(() -> RpcCalls.call(() -> stub.getCallPort(Empty.getDefaultInstance())).getPort());
    if (port == null) {
      return null;
    }
    try {
      return port.call(session, frame);
    } catch (CallPort.Unusable e) {
      calls.unusable(port);
      return null;
    }
  }

  /** Stores a graph of new objects (objects[0] gets the alias, if any); durable when it returns. */
  public void makePersistentObjects(List<NewObject> objects, String alias) {
    makePersistent(objects.stream().map(WireRecords::objectData).toList(), alias);
  }

  /**
   * {@link #makePersistentObjects} with the objects as they travel: for servers and for tests that
   * send what a client could not build (malformed IDs, headers or fields).
   */
  public void makePersistent(List<ObjectData> objects, String alias) {
    RpcCalls.call(() -> stub.makePersistent(MakePersistentRequest.newBuilder()
        .addAllObjects(objects).setAlias(alias == null ? "" : alias).build()));
  }

  /** Runs an active method; args and result are encoded by the object's language. */
  public byte[] callMethod(String objectId, String method, byte[] args) {
    CallMethodRequest request = CallMethodRequest.newBuilder().setObjectId(objectId).setMethod(method)
        .setArgs(ByteString.copyFrom(args)).build();
    byte[] result = framed(CallFrame.newBuilder().setCallMethod(request));
    return result != null ? result : RpcCalls.call(() -> stub.callMethod(request)).getResult().toByteArray();
  }

  /** Reads a field of a stored object, encoded by its language. */
  public byte[] getField(String objectId, String field) {
    GetFieldRequest request = GetFieldRequest.newBuilder().setObjectId(objectId).setField(field).build();
    byte[] value = framed(CallFrame.newBuilder().setGetField(request));
    return value != null ? value : RpcCalls.call(() -> stub.getField(request)).getValue().toByteArray();
  }

  /** Assigns a field of a stored object; durable when it returns. */
  public void setField(String objectId, String field, byte[] value) {
    SetFieldRequest request = SetFieldRequest.newBuilder().setObjectId(objectId).setField(field)
        .setValue(ByteString.copyFrom(value)).build();
    if (framed(CallFrame.newBuilder().setSetField(request)) == null) {
      RpcCalls.call(() -> stub.setField(request));
    }
  }

  /** The stored form of objects held by this backend. */
  public List<ObjectData> getObjects(List<String> ids) {
    return RpcCalls.call(() -> stub.getObjects(GetObjectsRequest.newBuilder().addAllIds(ids).build()))
        .getObjectsList();
  }

  /** Installs, updates or withdraws models on this backend (the Logic Module only). */
  public void deployModels(List<Model> models) {
    RpcCalls.call(() -> stub.deployModels(ModelList.newBuilder().addAllModels(models).build()));
  }

  /** Tells this backend that these models were removed at model change {@code revision} (the Logic Module only). */
  public void removeModels(List<String> namespaces, long revision) {
    RpcCalls.call(() -> stub.removeModels(io.dataclay.proto.RemoveModelsRequest.newBuilder()
        .addAllNamespaces(namespaces).setRevision(revision).build()));
  }

  /** Tells the backend to stop trusting these sessions now (or every cached session); the Logic Module only. */
  public void sessionsClosed(List<String> tokenSha256, boolean forgetAll) {
    RpcCalls.call(() -> stub.sessionsClosed(io.dataclay.proto.SessionsClosedRequest.newBuilder()
        .addAllTokenSha256(tokenSha256).setForgetAll(forgetAll).build()));
  }

  /** Engine, pool use, objects and execution environments, within {@code timeoutMs}. */
  public BackendStatus getStatus(long timeoutMs) {
    return RpcCalls.call(() -> stub.withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS)
        .getStatus(Empty.getDefaultInstance()));
  }

  /** Copies objects mastered on this backend to {@code backendId} (empty: one the backend picks). */
  public Copies newReplica(List<String> objectIds, String backendId, boolean recursive) {
    return WireRecords.copies(RpcCalls.call(() -> stub.newReplica(NewReplicaRequest.newBuilder()
        .addAllObjectIds(objectIds).setBackendId(backendId == null ? "" : backendId).setRecursive(recursive).build())));
  }

  /** A version of an object mastered on this backend, stored on {@code backendId} (empty: here). */
  public NewVersion newVersion(String objectId, String backendId) {
    return WireRecords.version(RpcCalls.call(() -> stub.newVersion(NewVersionRequest.newBuilder()
        .setObjectId(objectId).setBackendId(backendId == null ? "" : backendId).build())));
  }

  /** Gives a version's state to the object it versions and retires the version (held on this backend). */
  public void consolidateVersion(String versionId) {
    RpcCalls.call(() -> stub.consolidateVersion(
        ConsolidateVersionRequest.newBuilder().setVersionId(versionId).build()));
  }

  /** Moves objects mastered on this backend to {@code backendId}. */
  public Copies move(List<String> objectIds, String backendId, boolean recursive) {
    return WireRecords.copies(RpcCalls.call(() -> stub.move(MoveRequest.newBuilder()
        .addAllObjectIds(objectIds).setBackendId(backendId).setRecursive(recursive).build())));
  }

  /** Stores copies made on another backend (administrators: backends). */
  public void storeCopies(List<CopiedObject> objects, long senderTerm) {
    RpcCalls.call(() -> stub.storeCopies(StoreCopiesRequest.newBuilder().addAllObjects(objects)
        .setSenderTerm(senderTerm).build()));
  }

  /**
   * Applies changes made elsewhere to the copies on this backend (backends only), stamped with the
   * sender's term: a backend that knows a newer one refuses them.
   */
  public void applyDeltas(List<ObjectDelta> deltas, long senderTerm) {
    RpcCalls.call(() -> stub.applyDeltas(ApplyDeltasRequest.newBuilder().addAllDeltas(deltas)
        .setSenderTerm(senderTerm).build()));
  }

  /**
   * Makes this backend's replicas of the objects their master copies, after telling it the terms
   * (the Logic Module only; no objects: only the terms).
   */
  public void promoteReplicas(List<PromotedObject> objects, java.util.Map<String, Long> terms) {
    RpcCalls.call(() -> stub.promoteReplicas(PromoteReplicasRequest.newBuilder().addAllObjects(objects)
        .putAllTerms(terms).build()));
  }

  /** Removes objects from this backend (administrators: backends and the Logic Module). */
  public void deleteObjects(List<String> objectIds) {
    RpcCalls.call(() -> stub.deleteObjects(DeleteObjectsRequest.newBuilder().addAllObjectIds(objectIds).build()));
  }

  /** Starts recording newly referenced and held objects for collection {@code collectionId}. */
  public void beginCollection(long collectionId) {
    RpcCalls.call(() -> stub.beginCollection(CollectionRequest.newBuilder().setCollectionId(collectionId).build()));
  }

  /** Hands every stored object's outgoing references to {@code sink}, in the order they stream in. */
  public void getReferences(long collectionId, Consumer<ObjectReferences> sink) {
    RpcCalls.call(() -> {
      Iterator<io.dataclay.proto.ReferenceBatch> batches =
          stub.getReferences(CollectionRequest.newBuilder().setCollectionId(collectionId).build());
      while (batches.hasNext()) {
        batches.next().getObjectsList().forEach(sink);
      }
      return null;
    });
  }

  /** What was referenced or held since {@link #beginCollection}; stops recording. */
  public CollectionBarrier endCollection(long collectionId) {
    return RpcCalls.call(() -> stub.endCollection(CollectionRequest.newBuilder().setCollectionId(collectionId).build()));
  }

  /**
   * Closes this backend's write gate for snapshot {@code snapshotId} (the Logic Module) until
   * {@link #thawWrites} or {@code holdMs}; answers what it stored at the cut.
   */
  public io.dataclay.proto.FreezeResponse freezeWrites(String snapshotId, long holdMs, String dataset) {
    return RpcCalls.call(() -> stub.freezeWrites(io.dataclay.proto.FreezeRequest.newBuilder()
        .setSnapshotId(snapshotId).setHoldMs(holdMs).setDataset(dataset).build()));
  }

  /** Opens the write gate of snapshot {@code snapshotId} (the Logic Module). */
  public void thawWrites(String snapshotId) {
    RpcCalls.call(() -> stub.thawWrites(snapshot(snapshotId)));
  }

  /** Ends snapshot {@code snapshotId} on this backend (the Logic Module): it keeps no more copies for it. */
  public void endSnapshot(String snapshotId) {
    RpcCalls.call(() -> stub.endSnapshot(snapshot(snapshotId)));
  }

  /** The headers of the objects staged here for import {@code importId}, batch by batch (the Logic Module). */
  public void prepareImport(String importId, Consumer<io.dataclay.proto.StagedObjects> sink) {
    RpcCalls.call(() -> {
      stub.prepareImport(io.dataclay.proto.ImportRequest.newBuilder().setImportId(importId).build())
          .forEachRemaining(sink);
      return null;
    });
  }

  /** Tells this backend how import {@code importId} ended: kept when committed, else removed (the Logic Module). */
  public void finishImport(String importId, boolean committed) {
    RpcCalls.call(() -> stub.finishImport(io.dataclay.proto.FinishImportRequest.newBuilder()
        .setImportId(importId).setCommitted(committed).build()));
  }

  private static io.dataclay.proto.SnapshotRequest snapshot(String snapshotId) {
    return io.dataclay.proto.SnapshotRequest.newBuilder().setSnapshotId(snapshotId).build();
  }

  @Override
  public void close() {
    if (calls != null) {
      calls.close();
    }
    if (owned != null) {
      Channels.close(owned);
    }
  }
}
