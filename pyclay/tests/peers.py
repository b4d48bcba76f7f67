"""Real in-process gRPC servers that play the peer roles pyclay talks to in unit tests: a Logic
Module peer (sessions, backends, object metadata, aliases), Data Service peers (record requests
and answer them as each test decides) and a link peer (the Data Service's side of the execution
environment's stream). They implement the protocol roles, not the Java services' logic."""
from __future__ import annotations

import queue
import threading
import uuid
from concurrent import futures

import grpc

from dataclay.exceptions import (
    AliasAlreadyExistsError, AliasDoesNotExistError, NotAuthenticatedError, ObjectDoesNotExistError,
    ObjectNotHereError)
from dataclay._internal.proto import (
    common_pb2, dataservice_pb2, dataservice_pb2_grpc, executionenv_pb2, executionenv_pb2_grpc, logicmodule_pb2,
    logicmodule_pb2_grpc)
from dataclay._internal.rpc import abort_with

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
    """Accepts one user, lists the backends it is given and answers object metadata from `objects`."""

    def __init__(self, user="alice", password="secret"):
        self.user, self.password = user, password
        self.tokens: set[str] = set()
        self.backends: list = []
        self.objects: dict[str, common_pb2.ObjectInfo] = {}
        self.aliases: dict[str, str] = {}
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
        return self.objects[request.id]

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

    def NewAlias(self, request, context):
        self._count("NewAlias", context)
        if request.alias in self.aliases:
            abort_with(context, AliasAlreadyExistsError(f"alias {request.alias} exists"))
        self.aliases[request.alias] = request.object_id
        return common_pb2.Empty()


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

    def GetField(self, request, context):
        self._record(request, context)
        return self.on_get_field(request)

    def SetField(self, request, context):
        self._record(request, context)
        return common_pb2.Empty()

    def GetObjects(self, request, context):
        self._record(request, context)
        return dataservice_pb2.GetObjectsResponse(objects=[self.stored[i] for i in request.ids if i in self.stored])


class LinkPeer(executionenv_pb2_grpc.ExecutionEnvironmentLinkServicer):
    """The Data Service's side of the link: checks the secret, queues what the environment sends and
    sends what the test puts in `outgoing` (None ends the stream). Also serves GetObjects from `stored`."""

    def __init__(self, secret: str = "s3cret"):
        self.secret = secret
        self.received: queue.Queue = queue.Queue()
        self.outgoing: queue.Queue = queue.Queue()
        self.stored: dict[str, common_pb2.ObjectData] = {}
        self.get_objects_calls: list = []
        self.attached = threading.Event()
        self.ended = threading.Event()
        store = _StorePeer(self)
        self.server, self.port = start_server(
            lambda s: executionenv_pb2_grpc.add_ExecutionEnvironmentLinkServicer_to_server(self, s),
            lambda s: dataservice_pb2_grpc.add_DataServiceServicer_to_server(store, s))

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.outgoing.put(None)
        self.server.stop(0)

    def Attach(self, request_iterator, context):
        if dict(context.invocation_metadata()).get("dataclay-ee-secret") != self.secret:
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "bad execution environment secret")
        self.attached.set()

        def read():
            try:
                for message in request_iterator:
                    self.received.put(message)
            except grpc.RpcError:
                pass
            self.ended.set()

        threading.Thread(target=read, daemon=True).start()
        while True:
            message = self.outgoing.get()
            if message is None:
                return
            yield message

    def send_execute(self, **fields) -> None:
        self.outgoing.put(executionenv_pb2.DataServiceMessage(execute=executionenv_pb2.ExecuteRequest(**fields)))

    def next_message(self, timeout: float = WAIT):
        return self.received.get(timeout=timeout)


class _StorePeer(dataservice_pb2_grpc.DataServiceServicer):
    def __init__(self, link: LinkPeer):
        self.link = link

    def GetObjects(self, request, context):
        self.link.get_objects_calls.append((list(request.ids), dict(context.invocation_metadata()).get(
            "dataclay-session")))
        return dataservice_pb2.GetObjectsResponse(
            objects=[self.link.stored[i] for i in request.ids if i in self.link.stored])
