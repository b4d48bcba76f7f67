"""Real in-process servers that play the peer roles pyclay talks to in unit tests: a Logic Module
peer (sessions, backends, object metadata, aliases), Data Service peers (record requests and
answer them as each test decides) over gRPC, and a link peer (the Data Service's side of the
execution environment's framed pipes). They implement the protocol roles, not the Java
services' logic."""
from __future__ import annotations

import os
import queue
import struct
import threading
import uuid
from concurrent import futures

import grpc
from google.protobuf.message import DecodeError

from dataclay.exceptions import (
    AliasAlreadyExistsError, AliasDoesNotExistError, NotAuthenticatedError, ObjectDoesNotExistError,
    ObjectNotHereError)
from dataclay._internal.proto import (
    common_pb2, dataservice_pb2, dataservice_pb2_grpc, executionenv_pb2, logicmodule_pb2, logicmodule_pb2_grpc)
from dataclay._internal.rpc import abort_with
from dataclay._internal.rpc.convert import add_object_data
from dataclay._internal.serialization.graph import GraphWriter

WAIT = 10.0


def start_server(*adders) -> tuple[grpc.Server, int]:
    """A started server on a free local port with the given servicer adders."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    for add in adders:
        add(server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, port


class LogicModulePeer(logicmodule_pb2_grpc.LogicModuleServicer):
    """Accepts one user, lists the backends and models it is given and answers object metadata from `objects`."""

    def __init__(self, user="alice", password="secret"):
        self.user, self.password = user, password
        self.tokens: set[str] = set()
        self.backends: list = []
        self.objects: dict[str, common_pb2.ObjectInfo] = {}
        self.aliases: dict[str, str] = {}
        self.models: list = []
        self.calls: dict[str, int] = {}
        self.server, self.port = start_server(lambda s: logicmodule_pb2_grpc.add_LogicModuleServicer_to_server(self, s))

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.stop(0)

    def _count(self, name: str, context, authenticated=True) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1
        if authenticated:
            token = dict(context.invocation_metadata()).get("dataclay-session")
            if token not in self.tokens:
                abort_with(context, NotAuthenticatedError(f"unknown session {token!r}"))

    def add_backend(self, address: str, name: str = "", alive=True) -> str:
        backend_id = str(uuid.uuid4())
        host, port = address.rsplit(":", 1)
        self.backends.append(common_pb2.BackendInfo(id=backend_id, name=name or f"backend-{len(self.backends) + 1}",
                                                    host=host, port=int(port), languages=[common_pb2.PYTHON],
                                                    alive=alive))
        return backend_id

    def move_backend(self, backend_id: str, address: str) -> None:
        host, port = address.rsplit(":", 1)
        for b in self.backends:
            if b.id == backend_id:
                b.host, b.port = host, int(port)

    def Health(self, request, context):
        return logicmodule_pb2.HealthResponse(version="peer")

    def NewSession(self, request, context):
        self._count("NewSession", context, authenticated=False)
        if (request.username, request.password) != (self.user, self.password):
            abort_with(context, NotAuthenticatedError("wrong user or password"))
        token = uuid.uuid4().hex
        self.tokens.add(token)
        return logicmodule_pb2.SessionInfo(token=token, username=request.username,
                                           dataset=request.dataset or request.username, datasets=[request.username])

    def CloseSession(self, request, context):
        self._count("CloseSession", context)
        self.tokens.discard(dict(context.invocation_metadata()).get("dataclay-session"))
        return common_pb2.Empty()

    def GetBackends(self, request, context):
        self._count("GetBackends", context)
        return logicmodule_pb2.BackendList(backends=self.backends)

    def GetObjectInfo(self, request, context):
        self._count("GetObjectInfo", context)
        if request.id not in self.objects:
            abort_with(context, ObjectDoesNotExistError(f"no object {request.id}"))
        info = common_pb2.ObjectInfo()
        info.CopyFrom(self.objects[request.id])
        info.aliases[:] = [alias for alias, oid in self.aliases.items() if oid == request.id]
        return info

    def GetObjectByAlias(self, request, context):
        self._count("GetObjectByAlias", context)
        if request.alias not in self.aliases:
            abort_with(context, AliasDoesNotExistError(f"no alias {request.alias}"))
        return self.objects[self.aliases[request.alias]]

    def DeleteAlias(self, request, context):
        self._count("DeleteAlias", context)
        if self.aliases.pop(request.alias, None) is None:
            abort_with(context, AliasDoesNotExistError(f"no alias {request.alias}"))
        return common_pb2.Empty()

    def ListModels(self, request, context):
        self._count("ListModels", context)
        wanted = [m for m in self.models if request.language in (common_pb2.LANGUAGE_UNSPECIFIED, m.language)]
        return logicmodule_pb2.ModelList(models=wanted)

    def NewAlias(self, request, context):
        self._count("NewAlias", context)
        if request.alias in self.aliases:
            abort_with(context, AliasAlreadyExistsError(f"alias {request.alias} exists"))
        self.aliases[request.alias] = request.object_id
        return common_pb2.Empty()


def _recorded_answer(hook: str):
    """A Data Service peer's RPC method: records the request, then answers with the peer's
    `hook(request)`, which each test may replace."""

    def answer(self, request, context):
        self._record(request, context)
        return getattr(self, hook)(request)

    return answer


class DataServicePeer(dataservice_pb2_grpc.DataServiceServicer):
    """Records every request; stores made-persistent objects; answers calls with `on_call(request)`."""

    def __init__(self, lm: LogicModulePeer | None = None, port: int = 0):
        self.lm = lm
        self.requests: list = []
        self.tokens: list = []
        self.stored: dict[str, common_pb2.ObjectData] = {}
        self.on_call = lambda request: dataservice_pb2.CallMethodResponse()
        self.on_get_field = lambda request: dataservice_pb2.GetFieldResponse()
        self.fail_with = None
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
        dataservice_pb2_grpc.add_DataServiceServicer_to_server(self, self.server)
        self.port = self.server.add_insecure_port(f"127.0.0.1:{port}")
        self.server.start()
        self.backend_id = lm.add_backend(self.address) if lm is not None else ""

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.stop(0).wait()

    def _record(self, request, context):
        self.requests.append(request)
        self.tokens.append(dict(context.invocation_metadata()).get("dataclay-session"))
        if self.fail_with is not None:
            abort_with(context, self.fail_with)

    def MakePersistent(self, request, context):
        self._record(request, context)
        if request.alias and self.lm is not None:
            if request.alias in self.lm.aliases:
                abort_with(context, AliasAlreadyExistsError(f"alias {request.alias} already exists"))
            self.lm.aliases[request.alias] = request.objects[0].id
        for data in request.objects:
            self.stored[data.id] = data
            if self.lm is not None:
                self.lm.objects[data.id] = common_pb2.ObjectInfo(
                    id=data.id, class_name=data.header.class_name, language=common_pb2.PYTHON,
                    master_backend_id=self.backend_id)
        return common_pb2.Empty()

    def CallMethod(self, request, context):
        self._record(request, context)
        if request.object_id not in self.stored:
            abort_with(context, ObjectNotHereError(f"object {request.object_id} is not here"))
        return self.on_call(request)

    GetField = _recorded_answer("on_get_field")

    def SetField(self, request, context):
        self._record(request, context)
        return common_pb2.Empty()

    def GetObjects(self, request, context):
        self._record(request, context)
        return dataservice_pb2.GetObjectsResponse(objects=[self.stored[i] for i in request.ids if i in self.stored])


class CopyingPeer(DataServicePeer):
    """A Data Service peer that also answers the copy RPCs with what each test sets."""

    def __init__(self, lm):
        super().__init__(lm)
        self.on_new_replica = lambda request: dataservice_pb2.CopiesResponse()
        self.on_new_version = lambda request: dataservice_pb2.NewVersionResponse()
        self.on_move = lambda request: dataservice_pb2.CopiesResponse()
        self.on_consolidate = lambda request: common_pb2.Empty()

    NewReplica = _recorded_answer("on_new_replica")
    NewVersion = _recorded_answer("on_new_version")
    Move = _recorded_answer("on_move")
    ConsolidateVersion = _recorded_answer("on_consolidate")


class LinkPeer:
    """The Data Service's side of an execution environment's link: a pair of pipes, the environment's
    standard input (frames to it) and output (frames from it). It answers `load` from `stored` (each
    request recorded in `load_calls` as (ids, call_id)) and `relay` with `on_relay(request)`
    (default: UNIMPLEMENTED), and queues every other EnvironmentMessage it receives in arrival order.
    Its framing is written here from the wire contract, independently of pyclay's."""

    def __init__(self):
        self.received: queue.Queue = queue.Queue()
        self.stored: dict[str, common_pb2.ObjectData] = {}
        self.load_calls: list = []
        self.relays: list = []
        self.before_load = lambda ids: None
        self.on_relay = lambda request: executionenv_pb2.RelayReply(
            status_code=grpc.StatusCode.UNIMPLEMENTED.value[0], status_message="no relay in this test")
        self.ended = threading.Event()
        self._write_lock = threading.Lock()
        self._to_ee_read, self._to_ee = os.pipe()
        self._from_ee, self._from_ee_write = os.pipe()
        self._reader = threading.Thread(target=self._read, name="link-peer-read", daemon=True)

    def environment_fds(self) -> tuple[int, int]:
        """The environment's ends (read, write), for an in-process link; start() must follow."""
        return self._to_ee_read, self._from_ee_write

    def start(self, close_environment_ends: bool = False) -> "LinkPeer":
        """Starts reading the environment's frames; closes its ends here when a child process holds them."""
        if close_environment_ends:
            os.close(self._to_ee_read)
            os.close(self._from_ee_write)
        self._reader.start()
        return self

    def _read(self) -> None:
        try:
            while True:
                message = executionenv_pb2.EnvironmentMessage.FromString(read_frame(self._from_ee))
                kind = message.WhichOneof("kind")
                if kind == "load":
                    self.load_calls.append((list(message.load.ids), message.load.call_id))
                    self.before_load(list(message.load.ids))
                    self.send(executionenv_pb2.DataServiceMessage(loaded=executionenv_pb2.LoadReply(
                        request_id=message.load.request_id,
                        objects=[self.stored[i] for i in message.load.ids if i in self.stored])))
                elif kind == "relay":
                    self.relays.append(message.relay)
                    reply = self.on_relay(message.relay)
                    reply.request_id = message.relay.request_id
                    self.send(executionenv_pb2.DataServiceMessage(relayed=reply))
                else:
                    self.received.put(message)
        except (OSError, EOFError, DecodeError):
            pass
        finally:
            self.ended.set()

    def store(self, root, backend_id: str, dataset: str = "alice") -> list[str]:
        """Stores `root` and what it reaches on backend `backend_id`, in their stored form, as the Data
        Service would; their IDs, root first."""
        writer = GraphWriter(backend_id, dataset=dataset)
        writer.add_root(root)
        records = writer.drain()
        message = executionenv_pb2.ExecuteResult()
        add_object_data(message.new_objects, records)
        for data in message.new_objects:
            self.stored[data.id] = data
        return [r.id for r in records]

    def send(self, message: executionenv_pb2.DataServiceMessage) -> None:
        """Sends one DataServiceMessage frame to the environment."""
        body = message.SerializeToString()
        self.send_raw(struct.pack(">I", len(body)) + body)

    def send_raw(self, data: bytes) -> None:
        """Writes `data` as is (for malformed frames)."""
        with self._write_lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self._to_ee, view):]

    def send_execute(self, **fields) -> None:
        fields.setdefault("caller", caller())
        self.send(executionenv_pb2.DataServiceMessage(execute=executionenv_pb2.ExecuteRequest(**fields)))

    def deploy(self, files: dict) -> None:
        """Sends the whole model set: one model holding `files` (path -> bytes)."""
        model = logicmodule_pb2.Model(namespace="tests", language=common_pb2.PYTHON,
                                      files=[logicmodule_pb2.ModelFile(path=p, content=c) for p, c in files.items()])
        self.send(executionenv_pb2.DataServiceMessage(deploy=logicmodule_pb2.ModelList(models=[model])))

    def next_message(self, timeout: float = WAIT):
        return self.received.get(timeout=timeout)

    def close_link(self) -> None:
        """Ends the link from the Data Service's side (the environment reads end of stream)."""
        with self._write_lock:
            try:
                os.close(self._to_ee)
            except OSError:
                pass

    def stop(self) -> None:
        self.close_link()
        for fd in (self._from_ee,):
            try:
                os.close(fd)
            except OSError:
                pass


def caller(username: str = "alice", datasets=("alice",)) -> executionenv_pb2.CallScope:
    """Who a call runs for, as the Data Service says it."""
    return executionenv_pb2.CallScope(username=username, dataset=username, datasets=list(datasets))


def model_files(root) -> dict:
    """path -> bytes of every .py file under `root`, as a deploy carries them."""
    import pathlib
    root = pathlib.Path(root)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*.py")
            if "__pycache__" not in p.parts}


def read_frame(fd: int) -> bytes:
    (size,) = struct.unpack(">I", _read_exactly(fd, 4))
    return _read_exactly(fd, size)


def _read_exactly(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, left)
        if not chunk:
            raise EOFError("end of stream")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
