"""Channels whose calls the Data Service makes: the execution environment has no network and no
session token, so the pyclay clients it uses (to reach objects of other backends, look an alias up,
list the backends) run on LinkChannels, whose unary calls travel over the link as `relay` requests
for the call being served. The Data Service makes them in that call's session, and only the calls
on data it allows; its answer comes back as the response, or as the gRPC error the server gave."""
from __future__ import annotations

import asyncio

import grpc

from dataclay._internal.ee.call_context import current_call
from dataclay._internal.rpc.errors import ERROR_TRAILER
from dataclay._internal.settings_table import DEFAULT_PORT

LOGIC_MODULE = f"logic-module.dataclay.invalid:{DEFAULT_PORT}"
"""The address the environment's clients use for the Logic Module: relayed to it by the Data Service."""


class RelayedCallError(grpc.RpcError):
    """A relayed call that failed, carrying what a gRPC error carries (status, details, the error trailer)."""

    def __init__(self, code: grpc.StatusCode, details: str, trailers: tuple = ()):
        super().__init__(details)
        self._code = code
        self._details = details
        self._trailers = trailers

    def code(self) -> grpc.StatusCode:
        """The status."""
        return self._code

    def details(self) -> str:
        """The status message."""
        return self._details

    def trailing_metadata(self) -> tuple:
        """The trailers (the dataClay error, when the server sent one)."""
        return self._trailers

    def initial_metadata(self) -> tuple:
        """No headers are relayed."""
        return ()


_STATUS = {code.value[0]: code for code in grpc.StatusCode}


class LinkChannel:
    """Stands for a grpc.Channel to `address` (a backend's, or LOGIC_MODULE) on the link of `session`."""

    def __init__(self, session, address: str):
        self._session = session
        self._target = "" if address == LOGIC_MODULE else address

    def unary_unary(self, method, request_serializer=None, response_deserializer=None, _registered_method=False):
        """A callable making one relayed call of `method`."""
        return _Relayed(self._session, self._target, method, request_serializer, response_deserializer)

    def unary_stream(self, method, *args, **kwargs):
        """Streaming calls are not relayed."""
        return _refused(method)

    def stream_unary(self, method, *args, **kwargs):
        """Streaming calls are not relayed."""
        return _refused(method)

    def stream_stream(self, method, *args, **kwargs):
        """Streaming calls are not relayed."""
        return _refused(method)

    def close(self) -> None:
        """Nothing to release."""

    async def aclose(self) -> None:
        """Nothing to release."""


class AioLinkChannel(LinkChannel):
    """The asyncio twin: each relayed call is awaited (it waits for its answer on a worker thread)."""

    def unary_unary(self, method, request_serializer=None, response_deserializer=None, _registered_method=False):
        """A callable returning an awaitable of one relayed call."""
        blocking = super().unary_unary(method, request_serializer, response_deserializer)

        def call(request, timeout=None, metadata=None, **ignored):
            call_id = _call_id()
            return asyncio.get_running_loop().run_in_executor(None, blocking.relay, call_id, request)

        return call

    async def close(self) -> None:
        """Nothing to release."""


class _Relayed:
    def __init__(self, session, target: str, method: str, serializer, deserializer):
        self._session = session
        self._target = target
        self._method = method
        self._serializer = serializer
        self._deserializer = deserializer

    def __call__(self, request, timeout=None, metadata=None, **ignored):
        return self.relay(_call_id(), request)

    def relay(self, call_id: int, request):
        body = self._serializer(request) if self._serializer else request
        reply = self._session.relay(call_id, self._target, self._method, body)
        if reply.status_code == 0:
            return self._deserializer(reply.response) if self._deserializer else reply.response
        trailers = ((ERROR_TRAILER, reply.error.SerializeToString()),) if reply.HasField("error") else ()
        raise RelayedCallError(_STATUS.get(reply.status_code, grpc.StatusCode.UNKNOWN), reply.status_message, trailers)


def _call_id() -> int:
    call = current_call()
    if call is None:
        raise RelayedCallError(grpc.StatusCode.UNAUTHENTICATED,
                               "inside a backend, other servers are reached only while a call runs")
    return call.call_id


def _refused(method: str):
    def call(*args, **kwargs):
        raise RelayedCallError(grpc.StatusCode.UNIMPLEMENTED,
                               f"{method} is a streaming call: not available inside a backend")
    return call
