package io.dataclay.ds.servicer;

import io.dataclay.ds.codec.Messages;
import io.dataclay.ds.environments.ExecutionKind;
import io.dataclay.ds.execution.ExecutionService;
import io.dataclay.ds.session.Session;
import io.dataclay.proto.CallMethodRequest;
import io.dataclay.proto.GetFieldRequest;
import io.dataclay.proto.SetFieldRequest;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * CallMethod, GetField and SetField from their requests, the same whichever transport brought them
 * (gRPC, or the call port): every field checked (INVALID_ARGUMENT names the bad one), then run by
 * the execution service in {@code session}, which checks the session's access to the object.
 */
public final class ObjectCalls {
  private static final byte[] NO_BYTES = new byte[0];

  private ObjectCalls() {}

  /** Starts an active method; the future holds its encoded result. */
  public static CompletableFuture<byte[]> callMethod(ExecutionService execution, Session session,
      CallMethodRequest request, boolean nested) {
    UUID id = Messages.uuid(request.getObjectId(), "object_id");
    String method = Messages.name(request.getMethod(), "method");
    return execution.execute(session, id, ExecutionKind.CALL_METHOD, method, request.getArgs().toByteArray(), nested);
  }

  /** Starts a field read; the future holds the encoded value. */
  public static CompletableFuture<byte[]> getField(ExecutionService execution, Session session,
      GetFieldRequest request, boolean nested) {
    UUID id = Messages.uuid(request.getObjectId(), "object_id");
    String field = Messages.name(request.getField(), "field");
    return execution.execute(session, id, ExecutionKind.GET_FIELD, field, NO_BYTES, nested);
  }

  /** Starts a field assignment, durable when the future completes. */
  public static CompletableFuture<byte[]> setField(ExecutionService execution, Session session,
      SetFieldRequest request, boolean nested) {
    UUID id = Messages.uuid(request.getObjectId(), "object_id");
    String field = Messages.name(request.getField(), "field");
    return execution.execute(session, id, ExecutionKind.SET_FIELD, field, request.getValue().toByteArray(), nested);
  }
}
