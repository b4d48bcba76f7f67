package io.dataclay.rpc;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.dataclay.common.RateLimitedLog;
import io.dataclay.exceptions.*;
import io.dataclay.proto.ErrorInfo;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Turns dataClay exceptions into a gRPC status plus the {@code dataclay-error-bin} trailer and
 * back. Servers and clients in every language follow the same table (docs/internals.md).
 */
public final class GrpcErrors {
  /** Trailer carrying a serialised {@link ErrorInfo}. */
  public static final Metadata.Key<byte[]> ERROR_KEY =
      Metadata.Key.of("dataclay-error-bin", Metadata.BINARY_BYTE_MARSHALLER);

  private static final Logger LOG = Logger.getLogger(GrpcErrors.class.getName());
  // a bug a stranger can trigger must not let them fill the disk with stack traces
  private static final RateLimitedLog FAILURES = RateLimitedLog.of(LOG);

  private GrpcErrors() {}

  /** The wire code an error code is sent as. */
  public static io.dataclay.proto.ErrorCode toWire(ErrorCode code) {
    return io.dataclay.proto.ErrorCode.valueOf(code.name());
  }

  /**
   * The error code a wire code stands for; the unspecified zero value and codes this side does
   * not know (a newer peer) become {@link ErrorCode#INTERNAL}.
   */
  public static ErrorCode fromWire(io.dataclay.proto.ErrorCode wire) {
    return switch (wire) {
      case ERROR_UNSPECIFIED, UNRECOGNIZED -> ErrorCode.INTERNAL;
      default -> ErrorCode.valueOf(wire.name());
    };
  }

  /** The gRPC status code a wire error code travels with. */
  public static Status.Code statusCode(io.dataclay.proto.ErrorCode wire) {
    return statusCode(fromWire(wire));
  }

  /** The gRPC status code an error code travels with (the switch names every code, so a new one must be added here). */
  public static Status.Code statusCode(ErrorCode code) {
    return switch (code) {
      case INVALID_ARGUMENT, SERIALIZATION_ERROR -> Status.Code.INVALID_ARGUMENT;
      case NOT_AUTHENTICATED -> Status.Code.UNAUTHENTICATED;
      case PERMISSION_DENIED -> Status.Code.PERMISSION_DENIED;
      case ALIAS_DOES_NOT_EXIST, OBJECT_DOES_NOT_EXIST, ACCOUNT_DOES_NOT_EXIST, DATASET_DOES_NOT_EXIST,
          BACKEND_DOES_NOT_EXIST, METHOD_DOES_NOT_EXIST -> Status.Code.NOT_FOUND;
      case ALIAS_ALREADY_EXISTS, OBJECT_ALREADY_EXISTS, ACCOUNT_ALREADY_EXISTS -> Status.Code.ALREADY_EXISTS;
      case BACKEND_UNAVAILABLE -> Status.Code.UNAVAILABLE;
      case STORE_FULL, QUOTA_EXCEEDED -> Status.Code.RESOURCE_EXHAUSTED;
      case CALL_TIMED_OUT -> Status.Code.DEADLINE_EXCEEDED;
      case CONCURRENT_CHANGE -> Status.Code.ABORTED;
      case OBJECT_NOT_HERE, NOT_A_VERSION, NAMESPACE_CONFLICT, CLASS_NOT_REGISTERED -> Status.Code.FAILED_PRECONDITION;
      case REMOTE_EXCEPTION -> Status.Code.UNKNOWN;
      case INTERNAL -> Status.Code.INTERNAL;
    };
  }

  /** The status a server answers for {@code t}; unexpected throwables become INTERNAL and are logged. */
  public static StatusRuntimeException toStatus(Throwable t) {
    if (t instanceof StatusRuntimeException) {
      return (StatusRuntimeException) t;
    }
    return toStatus(info(t));
  }

  /** The {@link ErrorInfo} that carries {@code t}; unexpected throwables become INTERNAL and are logged. */
  public static ErrorInfo info(Throwable t) {
    ErrorInfo.Builder info = ErrorInfo.newBuilder();
    if (t instanceof RemoteException) {
      RemoteException r = (RemoteException) t;
      info.setCode(io.dataclay.proto.ErrorCode.REMOTE_EXCEPTION)
          .setMessage(r.remoteMessage())
          .setRemoteType(r.remoteType())
          .setRemoteArgs(ByteString.copyFrom(r.remoteArgs()))
          .setRemoteTraceback(r.remoteTraceback());
    } else if (t instanceof DataClayException) {
      DataClayException d = (DataClayException) t;
      info.setCode(toWire(d.code())).setMessage(String.valueOf(d.getMessage()));
    } else if (t instanceof Error) {
      // never handed to the caller as a result: a short INTERNAL, the details in this server's log
      FAILURES.log(Level.SEVERE, "failed call", () -> "a call failed with " + t, t);
      info.setCode(io.dataclay.proto.ErrorCode.INTERNAL).setMessage("the server could not complete the call ("
          + t.getClass().getSimpleName() + "); it goes on serving");
    } else {
      FAILURES.log(Level.SEVERE, "unexpected failure", () -> "unexpected failure while serving a call", t);
      info.setCode(io.dataclay.proto.ErrorCode.INTERNAL).setMessage(t.getClass().getName() + ": " + t.getMessage());
    }
    return info.build();
  }

  /** The status for an already-built {@link ErrorInfo}. */
  public static StatusRuntimeException toStatus(ErrorInfo info) {
    Metadata trailers = new Metadata();
    trailers.put(ERROR_KEY, info.toByteArray());
    return Status.fromCode(statusCode(info.getCode()))
        .withDescription(info.getMessage())
        .asRuntimeException(trailers);
  }

  /** The dataClay exception a client raises for a failed call. */
  public static DataClayException fromStatus(StatusRuntimeException e) {
    Metadata trailers = e.getTrailers();
    byte[] raw = trailers == null ? null : trailers.get(ERROR_KEY);
    if (raw != null) {
      try {
        return fromInfo(ErrorInfo.parseFrom(raw));
      } catch (InvalidProtocolBufferException bad) {
        return new InternalException("undecodable error detail: " + bad.getMessage());
      }
    }
    Status status = e.getStatus();
    String what = status.getDescription() == null ? status.getCode().name() : status.getDescription();
    if (status.getCode() == Status.Code.UNAVAILABLE || status.getCode() == Status.Code.DEADLINE_EXCEEDED) {
      return new BackendUnavailableException("service unavailable: " + what,
          status.getCode() == Status.Code.UNAVAILABLE && refusedConnection(status.getCause()));
    }
    if (status.getCode() == Status.Code.UNAUTHENTICATED) {
      return new NotAuthenticatedException(what);
    }
    if (status.getCode() == Status.Code.RESOURCE_EXHAUSTED) {
      return new InvalidArgumentException("the message is larger than the receiver accepts (" + what
          + "); the limit is DATACLAY_MAX_MESSAGE_SIZE");
    }
    return new InternalException("call failed with " + status.getCode() + ": " + what);
  }

  // grpc-java reports a connection that could not be made as UNAVAILABLE caused by a
  // ConnectException (Netty's AnnotatedConnectException); a call cut off after it was sent has
  // another cause, and may have run.
  private static boolean refusedConnection(Throwable cause) {
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof java.net.ConnectException) {
        return true;
      }
    }
    return false;
  }

  /** The exception for a decoded {@link ErrorInfo}. */
  public static DataClayException fromInfo(ErrorInfo info) {
    if (info.getCode() == io.dataclay.proto.ErrorCode.REMOTE_EXCEPTION) {
      return new RemoteException(info.getRemoteType(), info.getMessage(),
          info.getRemoteArgs().toByteArray(), info.getRemoteTraceback());
    }
    return forCode(fromWire(info.getCode()), info.getMessage());
  }

  /**
   * The exception class of an error code: INTERNAL, and REMOTE_EXCEPTION without the remote details
   * only {@link #fromInfo} has, become {@link InternalException}. The switch names every code, so a
   * new one must be added here.
   */
  public static DataClayException forCode(ErrorCode code, String message) {
    return switch (code) {
      case INVALID_ARGUMENT -> new InvalidArgumentException(message);
      case NOT_AUTHENTICATED -> new NotAuthenticatedException(message);
      case PERMISSION_DENIED -> new PermissionDeniedException(message);
      case ALIAS_ALREADY_EXISTS -> new AliasAlreadyExistsException(message);
      case ALIAS_DOES_NOT_EXIST -> new AliasDoesNotExistException(message);
      case OBJECT_DOES_NOT_EXIST -> new ObjectDoesNotExistException(message);
      case OBJECT_NOT_HERE -> new ObjectNotHereException(message);
      case OBJECT_ALREADY_EXISTS -> new ObjectAlreadyExistsException(message);
      case CLASS_NOT_REGISTERED -> new ClassNotRegisteredException(message);
      case ACCOUNT_ALREADY_EXISTS -> new AccountAlreadyExistsException(message);
      case ACCOUNT_DOES_NOT_EXIST -> new AccountDoesNotExistException(message);
      case DATASET_DOES_NOT_EXIST -> new DatasetDoesNotExistException(message);
      case NAMESPACE_CONFLICT -> new NamespaceConflictException(message);
      case BACKEND_DOES_NOT_EXIST -> new BackendDoesNotExistException(message);
      case BACKEND_UNAVAILABLE -> new BackendUnavailableException(message);
      case STORE_FULL -> new StoreFullException(message);
      case QUOTA_EXCEEDED -> new QuotaExceededException(message);
      case CALL_TIMED_OUT -> new CallTimedOutException(message);
      case CONCURRENT_CHANGE -> new ConcurrentChangeException(message);
      case NOT_A_VERSION -> new NotAVersionException(message);
      case METHOD_DOES_NOT_EXIST -> new MethodDoesNotExistException(message);
      case SERIALIZATION_ERROR -> new SerializationException(message);
      case INTERNAL, REMOTE_EXCEPTION -> new InternalException(message);
    };
  }
}
