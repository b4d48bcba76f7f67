"""Every RPC of LogicModule and DataService, read from the generated descriptors (a new RPC in the
.proto files is fuzzed without touching this code), and a raw call that sends arbitrary bytes."""
from __future__ import annotations

import dataclasses

import grpc
from google.protobuf import message_factory

from dataclay._internal.proto import dataservice_pb2, logicmodule_pb2

SERVICES = {"LogicModule": logicmodule_pb2, "DataService": dataservice_pb2}


@dataclasses.dataclass(frozen=True)
class Rpc:
    """One RPC: its service, name, request descriptor and whether it streams its answer."""
    service: str
    name: str
    request: object          # google.protobuf.descriptor.Descriptor
    server_streaming: bool

    @property
    def path(self) -> str:
        """The HTTP/2 path gRPC sends it on."""
        return f"/dataclay.v1.{self.service}/{self.name}"

    @property
    def request_class(self):
        """The generated message class of its request."""
        return message_factory.GetMessageClass(self.request)

    def __str__(self) -> str:
        return f"{self.service}.{self.name}"


def rpcs(service: str) -> list[Rpc]:
    """Every RPC of `service` ("LogicModule" or "DataService"), in declaration order."""
    descriptor = SERVICES[service].DESCRIPTOR.services_by_name[service]
    return [Rpc(service, m.name, m.input_type, m.server_streaming) for m in descriptor.methods]


def _identity(b: bytes) -> bytes:
    return b


class RawCaller:
    """Sends already-serialised request bytes on a channel and returns the raw reply (or raises
    grpc.RpcError). Streams are read to the end, at most `max_items` messages."""

    def __init__(self, channel: grpc.Channel, max_items: int = 10_000):
        self.channel = channel
        self.max_items = max_items
        self._callables: dict[str, object] = {}

    def call(self, rpc: Rpc, payload: bytes, token: str | None, timeout: float) -> list[bytes]:
        """The reply messages of one call (one for unary RPCs)."""
        metadata = (("dataclay-session", token),) if token is not None else ()
        stub = self._callables.get(rpc.path)
        if stub is None:
            factory = self.channel.unary_stream if rpc.server_streaming else self.channel.unary_unary
            stub = factory(rpc.path, request_serializer=_identity, response_deserializer=_identity)
            self._callables[rpc.path] = stub
        if not rpc.server_streaming:
            return [stub(payload, metadata=metadata, timeout=timeout)]
        replies = []
        stream = stub(payload, metadata=metadata, timeout=timeout)
        try:
            for item in stream:
                replies.append(item)
                if len(replies) >= self.max_items:
                    break
        finally:
            stream.cancel()
        return replies
