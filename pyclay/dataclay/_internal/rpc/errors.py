"""dataClay errors <-> gRPC status plus the `dataclay-error-bin` trailer (an ErrorInfo), in both
directions, following the table in docs/internals.md (the same one Java's GrpcErrors uses)."""
from __future__ import annotations

import grpc

from dataclay.exceptions import (
    ERRORS_BY_CODE, BackendUnavailableError, DataClayException, InternalError, InvalidArgumentError, NotAuthenticatedError,
    RemoteError)
from dataclay._internal.proto import common_pb2

ERROR_TRAILER = "dataclay-error-bin"

_STATUS_BY_CODE = {
    "INVALID_ARGUMENT": grpc.StatusCode.INVALID_ARGUMENT,
    "SERIALIZATION_ERROR": grpc.StatusCode.INVALID_ARGUMENT,
    "NOT_AUTHENTICATED": grpc.StatusCode.UNAUTHENTICATED,
    "PERMISSION_DENIED": grpc.StatusCode.PERMISSION_DENIED,
    "ALIAS_DOES_NOT_EXIST": grpc.StatusCode.NOT_FOUND,
    "OBJECT_DOES_NOT_EXIST": grpc.StatusCode.NOT_FOUND,
    "ACCOUNT_DOES_NOT_EXIST": grpc.StatusCode.NOT_FOUND,
    "DATASET_DOES_NOT_EXIST": grpc.StatusCode.NOT_FOUND,
    "BACKEND_DOES_NOT_EXIST": grpc.StatusCode.NOT_FOUND,
    "METHOD_DOES_NOT_EXIST": grpc.StatusCode.NOT_FOUND,
    "ALIAS_ALREADY_EXISTS": grpc.StatusCode.ALREADY_EXISTS,
    "OBJECT_ALREADY_EXISTS": grpc.StatusCode.ALREADY_EXISTS,
    "ACCOUNT_ALREADY_EXISTS": grpc.StatusCode.ALREADY_EXISTS,
    "BACKEND_UNAVAILABLE": grpc.StatusCode.UNAVAILABLE,
    "STORE_FULL": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "QUOTA_EXCEEDED": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "CALL_TIMED_OUT": grpc.StatusCode.DEADLINE_EXCEEDED,
    "OBJECT_NOT_HERE": grpc.StatusCode.FAILED_PRECONDITION,
    "NOT_A_VERSION": grpc.StatusCode.FAILED_PRECONDITION,
    "NAMESPACE_CONFLICT": grpc.StatusCode.FAILED_PRECONDITION,
    "CLASS_NOT_REGISTERED": grpc.StatusCode.FAILED_PRECONDITION,
    "REMOTE_EXCEPTION": grpc.StatusCode.UNKNOWN,
    "INTERNAL": grpc.StatusCode.INTERNAL,
}

# grpc-core's words for a call that never left this process because no connection could be made.
_CONNECT_FAILED = "failed to connect to all addresses"


def status_code_for(code: str) -> grpc.StatusCode:
    """The gRPC status an ErrorCode name travels with."""
    return _STATUS_BY_CODE.get(code, grpc.StatusCode.INTERNAL)


def error_info_for(error: DataClayException) -> common_pb2.ErrorInfo:
    """The ErrorInfo that carries `error` (a RemoteError keeps its remote type, args and traceback)."""
    if isinstance(error, RemoteError):
        return common_pb2.ErrorInfo(code=common_pb2.REMOTE_EXCEPTION, message=error.remote_message,
                                    remote_type=error.remote_type, remote_args=error.remote_args,
                                    remote_traceback=error.remote_traceback)
    code = error.code if error.code in _STATUS_BY_CODE else "INTERNAL"
    return common_pb2.ErrorInfo(code=common_pb2.ErrorCode.Value(code), message=str(error))


def error_from_info(info: common_pb2.ErrorInfo) -> DataClayException:
    """The exception a decoded ErrorInfo stands for (unknown codes become InternalError)."""
    if info.code == common_pb2.REMOTE_EXCEPTION:
        return RemoteError(info.remote_type, info.message, info.remote_args, info.remote_traceback)
    try:
        name = common_pb2.ErrorCode.Name(info.code)
    except ValueError:
        name = "INTERNAL"
    cls = ERRORS_BY_CODE.get(name, InternalError)
    return cls(info.message)


def error_from_rpc(error: grpc.RpcError) -> DataClayException:
    """The exception a client raises for a failed call: from the trailer when present, else by status."""
    raw = None
    for key, value in (error.trailing_metadata() or ()):
        if key == ERROR_TRAILER:
            raw = value
    if raw is not None:
        try:
            return error_from_info(common_pb2.ErrorInfo.FromString(raw))
        except Exception as bad:  # a garbled trailer must still surface as a dataClay error
            return InternalError(f"undecodable error detail: {bad}")
    code, details = error.code(), error.details() or ""
    what = details or (code.name if code is not None else "no status")
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return BackendUnavailableError(f"service unavailable: {what}",
                                       connect_failed=code == grpc.StatusCode.UNAVAILABLE and _CONNECT_FAILED in details)
    if code == grpc.StatusCode.UNAUTHENTICATED:
        return NotAuthenticatedError(what)
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return InvalidArgumentError(f"the message is larger than the receiver accepts ({what}); "
                                    f"the limit is DATACLAY_MAX_MESSAGE_SIZE")
    return InternalError(f"call failed with {code.name if code is not None else 'no status'}: {what}")


def abort_with(context: grpc.ServicerContext, error: DataClayException) -> None:
    """Server side: ends the call being served with `error` (status, message and trailer)."""
    info = error_info_for(error)
    context.set_trailing_metadata(((ERROR_TRAILER, info.SerializeToString()),))
    context.abort(status_code_for(error.code), info.message)
