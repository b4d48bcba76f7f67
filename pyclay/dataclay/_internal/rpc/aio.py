"""The asyncio twins of the stub wrappers, on grpc.aio channels: the same requests, checks and error
mapping (rpc/errors.py), but every call returns an awaitable, so that many calls from one event loop
are in flight on the wire at once without a thread each. A channel serves the event loop it was
opened in only: make these clients inside that loop."""
from __future__ import annotations

import asyncio

import grpc

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal import tracing
from dataclay._internal.proto import common_pb2, dataservice_pb2 as ds_pb2
from dataclay._internal.rpc import channels
from dataclay._internal.rpc.aio_call_port import AsyncCallPortLookup
from dataclay._internal.rpc.call_port import Unusable
from dataclay._internal.rpc.dataservice import DataServiceClient
from dataclay._internal.rpc.logicmodule import LogicModuleClient
from dataclay._internal.rpc.stub_calls import build

_EMPTY = common_pb2.Empty()


class AsyncCalls:
    """Turns a StubClient asynchronous: an aio channel of the running event loop, and `_call`
    returning a coroutine."""

    def _open_channel(self):
        self._loop = asyncio.get_running_loop()
        return self._target.open_aio()

    def _call(self, method, request, extract=None, timeout=None, metadata=None):
        return self._acall(method, request, extract, timeout, self._metadata if metadata is None else metadata)

    async def _acall(self, method, request, extract, timeout, metadata):
        try:
            response = await method(request, metadata=metadata, timeout=timeout)
        except grpc.RpcError as e:
            raise (await self._failure(e)) from None
        return response if extract is None else extract(response)

    async def _failure(self, error: grpc.RpcError):
        mapped, may_be_tls = self._target.unprobed_failure(error)
        if not may_be_tls:
            return mapped
        # The explanation makes a blocking TLS handshake: never on the event loop's thread.
        return await asyncio.get_running_loop().run_in_executor(None, self._target.tls_failure, mapped)

    def close(self) -> None:
        """Closes the channel (if this client opened it) from any thread: on its event loop while that loop
        lives; once it is closed, gRPC's finaliser closes the channel when the client is dropped."""
        loop = getattr(self, "_loop", None)
        if not self._owns_channel or loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            loop.create_task(self._channel.close())
        else:
            asyncio.run_coroutine_threadsafe(self._channel.close(), loop)

    async def aclose(self) -> None:
        """Closes the channel (if this client opened it)."""
        if self._owns_channel:
            await self._channel.close()


class AsyncDataServiceClient(AsyncCalls, DataServiceClient):
    """DataServiceClient whose calls are awaited (made inside the event loop that uses it). With
    `call_port`, its method calls and field reads and writes go through the backend's call port
    (rpc/aio_call_port.py: one connection per session carries the loop's calls at once) when it serves
    one, else over gRPC; never while tracing is on, nor in an execution environment."""

    def __init__(self, address: str, token: str | None = None, *, call_port: bool = False, **kwargs):
        DataServiceClient.__init__(self, address, token, **kwargs)
        self._aio_calls = None
        if call_port and not tracing.wanted() and not channels.relayed():
            host = address.rpartition(":")[0].strip("[]")
            self._aio_calls = AsyncCallPortLookup(host, self._target.tls, self._target.server_name)

    def call_method(self, object_id: str, method: str, args: bytes):
        if self._aio_calls is None:
            return DataServiceClient.call_method(self, object_id, method, args)
        frame = ds_pb2.CallFrame()
        try:
            request = frame.call_method
            request.object_id, request.method, request.args = object_id, method, args
        except (TypeError, ValueError, AttributeError) as e:
            raise InvalidArgumentError(f"call_method: {e}") from None
        return self._framed(frame, lambda: self._call(self._stub.CallMethod, request, _result))

    def get_field(self, object_id: str, field: str):
        if self._aio_calls is None:
            return DataServiceClient.get_field(self, object_id, field)
        request = build(ds_pb2.GetFieldRequest, "get_field", object_id=object_id, field=field)
        return self._framed(ds_pb2.CallFrame(get_field=request), lambda: self._call(self._stub.GetField, request, _value))

    def set_field(self, object_id: str, field: str, value: bytes):
        if self._aio_calls is None:
            return DataServiceClient.set_field(self, object_id, field, value)
        request = build(ds_pb2.SetFieldRequest, "set_field", object_id=object_id, field=field, value=value)
        return self._set_field(request)

    async def _set_field(self, request) -> None:
        await self._framed(ds_pb2.CallFrame(set_field=request), lambda: self._call(self._stub.SetField, request))

    async def _framed(self, frame, over_grpc):
        """The answer to `frame`'s call through the call port, or `await over_grpc()` when it is not used."""
        calls, token = self._aio_calls, self._token
        if token is not None:
            port = await calls.port(self._ask_call_port_async)
            if port is not None:
                try:
                    return await port.call(token, frame)
                except Unusable:
                    calls.unusable(port)
        return await over_grpc()

    async def _ask_call_port_async(self) -> int:
        return (await self._call(self._stub.GetCallPort, _EMPTY)).port

    def close(self) -> None:
        """Closes the channel and the call port's connections (if this client opened them), from any thread."""
        calls = self._aio_calls
        loop = getattr(self, "_loop", None)
        if self._owns_channel and calls is not None and loop is not None and not loop.is_closed():
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                calls.close()
            else:
                loop.call_soon_threadsafe(calls.close)
        AsyncCalls.close(self)

    async def aclose(self) -> None:
        if self._owns_channel and self._aio_calls is not None:
            self._aio_calls.close()
        await AsyncCalls.aclose(self)


def _result(response):
    return response.result


def _value(response):
    return response.value


class AsyncLogicModuleClient(AsyncCalls, LogicModuleClient):
    """LogicModuleClient whose calls are awaited (made inside the event loop that uses it)."""
