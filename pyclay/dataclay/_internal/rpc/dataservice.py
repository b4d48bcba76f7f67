"""The one wrapper around a Data Service's generated stub (mirrors Java's DataServiceClient).
Calls carry the session token as metadata; failures raise dataclay.exceptions classes. What the
runtimes use comes back as plain records (converted in rpc/convert.py); the status and snapshot
calls the CLI makes still return protocol messages."""
from __future__ import annotations

import operator

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.proto import common_pb2, dataservice_pb2 as ds_pb2, dataservice_pb2_grpc
from dataclay._internal.proto import logicmodule_pb2
from dataclay._internal.rpc.stub_calls import build, check_timeout, client_stream, server_stream
from dataclay._internal import tracing
from dataclay._internal.rpc import channels
from dataclay._internal.rpc.call_port import CallPortLookup, Unusable
from dataclay._internal.rpc.channels import DATA_SERVICE
from dataclay._internal.records import Copies, VersionRecord
from dataclay._internal.rpc.convert import add_object_data, copies, object_records, version_record
from dataclay._internal.rpc.stub_client import StubClient

_EMPTY = common_pb2.Empty()
_CallMethodRequest = ds_pb2.CallMethodRequest
_CallFrame = ds_pb2.CallFrame
_result = operator.attrgetter("result")
_value = operator.attrgetter("value")


class DataServiceClient(StubClient):
    """A client of the Data Service at `address` (see StubClient for the other arguments). With
    `call_port`, method calls and field reads and writes go through the backend's call port when it
    serves one (rpc/call_port.py), else over gRPC; never while tracing is on (a call there is not
    traced) nor in an execution environment (its calls are relayed)."""

    STUB = dataservice_pb2_grpc.DataServiceStub
    SERVER = DATA_SERVICE

    def __init__(self, address: str, token: str | None = None, *, call_port: bool = False, **kwargs):
        super().__init__(address, token, **kwargs)
        self._calls = None
        if call_port and not tracing.wanted() and not channels.relayed():
            host = address.rpartition(":")[0].strip("[]")
            self._calls = CallPortLookup(host, self._target.tls, self._target.server_name)

    def _framed(self, frame) -> bytes | None:
        """The answer to `frame`'s call through the call port (b"" for SetField), or None when the call
        port is not used (then the caller makes the call over gRPC)."""
        calls, token = self._calls, self._token
        if calls is None or token is None:
            return None
        port = calls.port(self._ask_call_port)
        if port is None:
            return None
        try:
            return port.call(token, frame)
        except Unusable:
            calls.unusable(port)
            return None

    def _ask_call_port(self) -> int:
        return self._call(self._stub.GetCallPort, _EMPTY).port

    def make_persistent(self, objects, alias: str | None = None) -> None:
        """Stores a graph of new objects (ObjectRecords or ObjectData; objects[0] gets the alias); durable on return."""
        if isinstance(objects, (str, bytes)) or not hasattr(objects, "__iter__"):
            raise InvalidArgumentError("make_persistent: objects must be a list of objects")
        request = build(ds_pb2.MakePersistentRequest, "make_persistent", alias=alias or "")
        try:
            add_object_data(request.objects, objects)
        except (TypeError, ValueError, AttributeError) as e:
            raise InvalidArgumentError(f"make_persistent: malformed object: {e}") from None
        return self._call(self._stub.MakePersistent, request)

    def call_method(self, object_id: str, method: str, args: bytes) -> bytes:
        """Runs an active method; `args` and the returned result are encoded by the object's language."""
        if self._calls is not None:
            frame = _CallFrame()
            try:
                request = frame.call_method
                request.object_id, request.method, request.args = object_id, method, args
            except (TypeError, ValueError, AttributeError) as e:
                raise InvalidArgumentError(f"call_method: {e}") from None
            result = self._framed(frame)
            return result if result is not None else self._call(self._stub.CallMethod, frame.call_method, _result)
        try:
            request = _CallMethodRequest(object_id=object_id, method=method, args=args)
        except (TypeError, ValueError) as e:
            raise InvalidArgumentError(f"call_method: {e}") from None
        return self._call(self._stub.CallMethod, request, _result)

    def get_field(self, object_id: str, field: str) -> bytes:
        """A field of a stored object, encoded by its language."""
        request = build(ds_pb2.GetFieldRequest, "get_field", object_id=object_id, field=field)
        if self._calls is not None:
            value = self._framed(_CallFrame(get_field=request))
            if value is not None:
                return value
        return self._call(self._stub.GetField, request, _value)

    def set_field(self, object_id: str, field: str, value: bytes) -> None:
        """Assigns a field of a stored object; durable when it returns."""
        request = build(ds_pb2.SetFieldRequest, "set_field", object_id=object_id, field=field, value=value)
        if self._calls is not None and self._framed(_CallFrame(set_field=request)) is not None:
            return None
        return self._call(self._stub.SetField, request)

    def close(self) -> None:
        """Closes the channel and the call port's connections (if this client opened them)."""
        if self._owns_channel and self._calls is not None:
            self._calls.close()
        super().close()

    def get_objects(self, ids) -> list:
        """The stored form (ObjectRecords) of objects this backend holds."""
        if isinstance(ids, (str, bytes)):
            raise InvalidArgumentError("get_objects: ids must be a list of object IDs, not a single string")
        request = build(ds_pb2.GetObjectsRequest, "get_objects", ids=list(ids))
        return self._call(self._stub.GetObjects, request, object_records)

    def new_replica(self, object_id: str, backend_id: str = "", recursive: bool = True) -> Copies:
        """Copies an object whose master is here to `backend_id` (empty: a backend of the server's choice)."""
        _check_bool("new_replica", "recursive", recursive)
        request = build(ds_pb2.NewReplicaRequest, "new_replica", object_ids=[_text("new_replica", object_id)],
                        backend_id=backend_id or "", recursive=recursive)
        return self._call(self._stub.NewReplica, request, copies)

    def new_version(self, object_id: str, backend_id: str = "") -> VersionRecord:
        """Makes a version (a copy with its own ID) of an object whose master is here, on `backend_id` (empty: here)."""
        request = build(ds_pb2.NewVersionRequest, "new_version", object_id=_text("new_version", object_id),
                        backend_id=backend_id or "")
        return self._call(self._stub.NewVersion, request, version_record)

    def consolidate_version(self, version_id: str) -> None:
        """Gives the versioned object this version's state (on every copy) and retires the version."""
        request = build(ds_pb2.ConsolidateVersionRequest, "consolidate_version",
                        version_id=_text("consolidate_version", version_id))
        return self._call(self._stub.ConsolidateVersion, request)

    def move(self, object_id: str, backend_id: str, recursive: bool = False,
             local_only: bool = False) -> Copies:
        """Relocates an object whose master is here (and, if `recursive`, what it references: with
        `local_only`, only what this backend masters) to `backend_id`."""
        _check_bool("move", "recursive", recursive)
        _check_bool("move", "local_only", local_only)
        request = build(ds_pb2.MoveRequest, "move", object_ids=[_text("move", object_id)],
                        backend_id=_text("move", backend_id, "backend_id"), recursive=recursive,
                        local_only=local_only)
        return self._call(self._stub.Move, request, copies)

    def deploy_models(self, models) -> None:
        """Installs or updates models (Model messages) on this backend."""
        request = build(logicmodule_pb2.ModelList, "deploy_models", models=list(models))
        return self._call(self._stub.DeployModels, request)

    def flush_all(self) -> int:
        """Makes this backend's execution environments of the caller drop the objects no call is using;
        returns how many were told."""
        return self._call(self._stub.FlushAll, _EMPTY).environments

    def get_status(self, timeout: float = 5.0) -> ds_pb2.BackendStatus:
        """Engine, pool use, object count and execution environments, within `timeout` seconds."""
        return self._call(self._stub.GetStatus, _EMPTY, timeout=check_timeout(timeout))

    def export_objects(self, snapshot_id: str):
        """Yields the SnapshotChunks of the master copies stored here as of a snapshot's cut (administrators)."""
        request = build(logicmodule_pb2.SnapshotRequest, "export_objects", snapshot_id=snapshot_id)
        return server_stream(self._stub.ExportObjects, request, self._metadata, None, self._target)

    def import_objects(self, chunks) -> ds_pb2.ImportReceipt:
        """Stages an import's objects here (ImportChunks: the import ID first, then delimited ObjectData)."""
        return client_stream(self._stub.ImportObjects, chunks, self._metadata, None, self._target)


def _text(operation: str, value, name: str = "object_id") -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgumentError(f"{operation}: {name} must be a non-empty string, not {value!r}")
    return value


def _check_bool(operation: str, name: str, value) -> None:
    if not isinstance(value, bool):
        raise InvalidArgumentError(f"{operation}: {name} must be True or False, not {value!r}")
