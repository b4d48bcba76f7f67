package io.dataclay.client;

import com.google.protobuf.ByteString;
import io.dataclay.proto.BackendStatus;
import io.dataclay.proto.CallMethodRequest;
import io.dataclay.proto.DataServiceGrpc;
import io.dataclay.proto.Empty;
import io.dataclay.proto.GetFieldRequest;
import io.dataclay.proto.GetObjectsRequest;
import io.dataclay.proto.MakePersistentRequest;
import io.dataclay.proto.Model;
import io.dataclay.proto.ModelList;
import io.dataclay.proto.ObjectData;
import io.dataclay.proto.SetFieldRequest;
import io.dataclay.rpc.SessionMetadata;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The one wrapper around a Data Service's generated stub. Every call carries the session token
 * from {@code token}; failures surface as {@link io.dataclay.exceptions.DataClayException}s.
 */
public final class DataServiceClient implements AutoCloseable {
  private final ManagedChannel owned;
  private final DataServiceGrpc.DataServiceBlockingStub stub;

  /** A client on a channel it owns (closed by {@link #close()}). */
  public DataServiceClient(String host, int port, Supplier<String> token) {
    this(Channels.forAddress(host, port), true, token);
  }

  /** A client on a channel owned by the caller. */
  public DataServiceClient(Channel channel, Supplier<String> token) {
    this(channel, false, token);
  }

  private DataServiceClient(Channel channel, boolean owns, Supplier<String> token) {
    this.owned = owns ? (ManagedChannel) channel : null;
    this.stub = DataServiceGrpc.newBlockingStub(
        ClientInterceptors.intercept(channel, SessionMetadata.clientInterceptor(token)));
  }

  /** Stores a graph of new objects (objects[0] gets the alias, if any); durable when it returns. */
  public void makePersistent(List<ObjectData> objects, String alias) {
    RpcCalls.call(() -> stub.makePersistent(MakePersistentRequest.newBuilder()
        .addAllObjects(objects).setAlias(alias == null ? "" : alias).build()));
  }

  /** Runs an active method; args and result are encoded by the object's language. */
  public byte[] callMethod(String objectId, String method, byte[] args) {
    return RpcCalls.call(() -> stub.callMethod(CallMethodRequest.newBuilder()
        .setObjectId(objectId).setMethod(method).setArgs(ByteString.copyFrom(args)).build()))
        .getResult().toByteArray();
  }

  /** Reads a field of a stored object, encoded by its language. */
  public byte[] getField(String objectId, String field) {
    return RpcCalls.call(() -> stub.getField(GetFieldRequest.newBuilder()
        .setObjectId(objectId).setField(field).build())).getValue().toByteArray();
  }

  /** Assigns a field of a stored object; durable when it returns. */
  public void setField(String objectId, String field, byte[] value) {
    RpcCalls.call(() -> stub.setField(SetFieldRequest.newBuilder()
        .setObjectId(objectId).setField(field).setValue(ByteString.copyFrom(value)).build()));
  }

  /** The stored form of objects held by this backend. */
  public List<ObjectData> getObjects(List<String> ids) {
    return RpcCalls.call(() -> stub.getObjects(GetObjectsRequest.newBuilder().addAllIds(ids).build()))
        .getObjectsList();
  }

  /** Installs or updates models on this backend. */
  public void deployModels(List<Model> models) {
    RpcCalls.call(() -> stub.deployModels(ModelList.newBuilder().addAllModels(models).build()));
  }

  /** Returns once every object the backend stored before the call is registered, within {@code timeoutMs}. */
  public void flushRegistrations(long timeoutMs) {
    RpcCalls.call(() -> stub.withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS)
        .flushRegistrations(Empty.getDefaultInstance()));
  }

  /** Engine, pool use, objects and execution environments, within {@code timeoutMs}. */
  public BackendStatus getStatus(long timeoutMs) {
    return RpcCalls.call(() -> stub.withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS)
        .getStatus(Empty.getDefaultInstance()));
  }

  @Override
  public void close() {
    if (owned != null) {
      Channels.close(owned);
    }
  }
}
