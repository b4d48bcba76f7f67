"""The asyncio twins of the stub wrappers, on grpc.aio channels: the same requests, checks and error
mapping (rpc/errors.py), but every call returns an awaitable, so that many calls from one event loop
are in flight on the wire at once without a thread each. A channel serves the event loop it was
opened in only: make these clients inside that loop."""
from __future__ import annotations

import asyncio

import grpc

from dataclay._internal.rpc.dataservice import DataServiceClient
from dataclay._internal.rpc.logicmodule import LogicModuleClient


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
    """DataServiceClient whose calls are awaited (made inside the event loop that uses it)."""


class AsyncLogicModuleClient(AsyncCalls, LogicModuleClient):
    """LogicModuleClient whose calls are awaited (made inside the event loop that uses it)."""
