"""The call port for calls awaited on an event loop (dataservice.proto: CallPort, CallFrame, CallReply):
the same frames and rules as rpc/call_port.py, but one connection per session and event loop carries
every call of that loop at once, each under its own ID, answered in any order (the server serves up
to 64 of a connection's calls at a time and reads on as they are answered). A reader task hands each
reply to the call waiting for it.

A server that goes silent is told from a slow call as on a blocking connection: the connection asks
for an empty frame every third of DATACLAY_UNREACHABLE_MS while calls wait, and fails every waiting
call with BACKEND_UNAVAILABLE when nothing came for that long. A connection that cannot be made or
opened raises Unusable: the caller makes the call over gRPC."""
from __future__ import annotations

import asyncio
import ssl
import struct
import time

from dataclay.exceptions import BackendUnavailableError, DataClayException, InternalError
from dataclay._internal.proto import dataservice_pb2 as ds_pb2
from dataclay._internal.rpc.call_port import OPEN_WAIT_S, PortQuestion, Unusable, _client_context, liveness
from dataclay._internal.rpc.errors import error_from_info
from dataclay._internal.rpc.tls import ClusterCa

_HEADER = struct.Struct(">I")
_CallFrame = ds_pb2.CallFrame
_CallReply = ds_pb2.CallReply
_CHUNK = 1 << 16


class AsyncCallPort:
    """The call port at `host`:`port` for the calls of the event loop that makes this (TLS trusting
    `tls` when given, the certificate checked against `server_name`)."""

    def __init__(self, host: str, port: int, tls: ClusterCa | None = None, server_name: str | None = None,
                 keepalive_ms: int | None = None):
        self.address = (host, port)
        self._server_name = server_name or host
        self._ssl = _client_context(tls) if tls is not None else None
        self._keepalive_ms, self._silence_s = liveness(keepalive_ms)
        self._connections: dict[str, _AsyncConnection] = {}
        self._opening: dict[str, asyncio.Future] = {}
        self._closed = False

    async def call(self, token: str, frame) -> bytes:
        """Sends `frame` (a CallFrame holding one call; its id is set here) in the session `token` and
        returns the reply's value. Raises the call's dataClay error, BackendUnavailableError when the
        connection broke or went silent while the call waited (it may have run), or Unusable when no
        connection could be made (nothing was sent)."""
        connection = await self._connection(token)
        return await connection.call(frame)

    def close(self) -> None:
        """Closes every connection; calls waiting on them fail, later calls raise Unusable."""
        self._closed = True
        connections, self._connections = list(self._connections.values()), {}
        for c in connections:
            c.close(BackendUnavailableError("service unavailable: the client closed the call port's connection",
                                            connect_failed=False))

    async def _connection(self, token: str) -> "_AsyncConnection":
        connection = self._connections.get(token)
        if connection is not None and not connection.closed:
            return connection
        if self._closed:
            raise Unusable()
        opening = self._opening.get(token)
        if opening is None:
            # the calls that find no connection wait for the one being opened
            opening = self._opening[token] = asyncio.ensure_future(self._open(token))
            opening.add_done_callback(lambda _: self._opening.pop(token, None))
        return await asyncio.shield(opening)

    async def _open(self, token: str) -> "_AsyncConnection":
        wait = min(self._silence_s or OPEN_WAIT_S, OPEN_WAIT_S)
        host, port = self.address
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(
                host, port, ssl=self._ssl, server_hostname=self._server_name if self._ssl else None), wait)
        except (OSError, ssl.SSLError, asyncio.TimeoutError):
            raise Unusable() from None
        connection = _AsyncConnection(reader, writer, token, self._silence_s)
        try:
            await asyncio.wait_for(connection.call(
                _CallFrame(open=ds_pb2.OpenCalls(session=token, keepalive_ms=self._keepalive_ms))), wait)
        except (BackendUnavailableError, InternalError, asyncio.TimeoutError):
            connection.close(None)
            raise Unusable() from None  # no session was opened: the caller falls back to gRPC
        except BaseException:
            connection.close(None)
            raise
        if self._closed:
            connection.close(None)
            raise Unusable()
        self._connections[token] = connection
        return connection


class AsyncCallPortLookup:
    """As rpc/call_port.py's CallPortLookup, for one event loop: `await port(ask)` is the AsyncCallPort,
    or None while calls go over gRPC."""

    def __init__(self, host: str, tls: ClusterCa | None, server_name: str | None):
        self._host = host
        self._tls = tls
        self._server_name = server_name
        self._port: AsyncCallPort | None = None
        self._question = PortQuestion()
        self._asking: asyncio.Future | None = None

    async def port(self, ask) -> AsyncCallPort | None:
        """The call port, awaiting `ask()` (the port number; a DataClayException when it cannot say) the first
        time; the calls that come meanwhile wait for the same answer."""
        if self._port is not None or not self._question.may_ask():
            return self._port
        if self._asking is None:
            self._asking = asyncio.ensure_future(self._ask(ask))
        asking = self._asking
        try:
            return await asyncio.shield(asking)
        finally:
            if asking.done() and self._asking is asking:
                self._asking = None

    async def _ask(self, ask) -> AsyncCallPort | None:
        try:
            number = await ask()
        except DataClayException:
            self._question.failed()
            return None
        if self._question.answered(number):
            self._port = AsyncCallPort(self._host, number, self._tls, self._server_name)
        return self._port

    def unusable(self, port: AsyncCallPort) -> None:
        """`port` could not be reached: calls go over gRPC for RETRY_AFTER_S, then the backend is asked again."""
        if self._port is port:
            self._port = None
            self._question.failed()
        port.close()

    def close(self) -> None:
        port, self._port, self._question.served = self._port, None, False
        if port is not None:
            port.close()


class _AsyncConnection:
    """One connection opened in the session `token`, carrying its event loop's calls at once."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, token: str,
                 silence_s: float | None):
        self.token = token
        self.closed = False
        self._reader = reader
        self._writer = writer
        self._silence_s = silence_s
        self._next_id = 1
        self._waiting: dict[int, asyncio.Future] = {}
        self._heard = time.monotonic()
        self._unsent = 0  # bytes the socket had not taken at the last silence check
        self._watch = None  # the timer that checks for silence while calls wait
        self._task = asyncio.get_running_loop().create_task(self._read_replies())

    async def call(self, frame) -> bytes:
        if self.closed:
            raise BackendUnavailableError("service unavailable: the call port's connection was closed",
                                          connect_failed=False)
        call_id = frame.id = self._next_id
        self._next_id += 1
        data = frame.SerializeToString()
        waiter = asyncio.get_running_loop().create_future()
        if not self._waiting:
            self._heard = time.monotonic()  # silence is counted from the first call sent
            self._watch_silence()
        self._waiting[call_id] = waiter
        try:
            try:
                self._writer.write(_HEADER.pack(len(data)) + data)
                await self._writer.drain()
            except (OSError, RuntimeError) as e:
                self.close(BackendUnavailableError(f"service unavailable: the call port closed the connection: "
                                                   f"{e}", connect_failed=False))
            reply = await waiter
        finally:
            self._waiting.pop(call_id, None)  # a cancelled call's reply is dropped when it comes
        if reply.HasField("error"):
            raise error_from_info(reply.error)
        return reply.value

    def close(self, error: Exception | None) -> None:
        """Closes the connection; every waiting call fails with `error` (or BACKEND_UNAVAILABLE)."""
        if self.closed:
            return
        self.closed = True
        failure = error or BackendUnavailableError("service unavailable: the call port's connection was closed",
                                                   connect_failed=False)
        waiting, self._waiting = self._waiting, {}
        for waiter in waiting.values():
            if not waiter.done():
                waiter.set_exception(failure)
        self._writer.close()
        if self._watch is not None:
            self._watch.cancel()
        if self._task is not asyncio.current_task():
            self._task.cancel()

    async def _read_body(self, size: int) -> bytes:
        """A frame's body, read as it arrives: a large reply streaming in is the server being heard."""
        parts = []
        while size:
            part = await self._reader.readexactly(min(size, _CHUNK))
            self._heard = time.monotonic()
            parts.append(part)
            size -= len(part)
        return b"".join(parts)

    def _watch_silence(self) -> None:
        """While calls wait, checks every third of the silence bound that the server was heard from
        within it (keepalives come that often), else fails them all."""
        if self._silence_s is None or self._watch is not None or self.closed:
            return
        self._watch = asyncio.get_running_loop().call_later(self._silence_s / 3, self._check_silence)

    def _check_silence(self) -> None:
        self._watch = None
        if not self._waiting or self.closed:
            return
        unsent = self._writer.transport.get_write_buffer_size()
        if unsent < self._unsent:
            self._heard = time.monotonic()  # the server is taking what is sent: it is there
        self._unsent = unsent
        if time.monotonic() - self._heard >= self._silence_s:
            self.close(BackendUnavailableError(f"service unavailable: the call port went silent for "
                                               f"{self._silence_s:g} s (DATACLAY_UNREACHABLE_MS)",
                                               connect_failed=False))
            return
        self._watch_silence()

    async def _read_replies(self) -> None:
        try:
            while True:
                header = await self._reader.readexactly(4)
                self._heard = time.monotonic()
                (size,) = _HEADER.unpack(header)
                body = await self._read_body(size)
                try:
                    reply = _CallReply.FromString(body)
                except Exception as e:
                    self.close(InternalError(f"the call port sent an unreadable reply: {e}"))
                    return
                if reply.id == 0:
                    if reply.HasField("error"):  # the server ends the connection, saying why
                        self.close(error_from_info(reply.error))
                        return
                    continue  # a keepalive
                waiter = self._waiting.get(reply.id)
                if waiter is not None and not waiter.done():
                    waiter.set_result(reply)
        except asyncio.CancelledError:
            self.close(None)  # the loop is ending (or close() cancelled this): the socket goes with it
            raise
        except (asyncio.IncompleteReadError, OSError) as e:
            self.close(BackendUnavailableError(f"service unavailable: the call port's connection broke: {e}"
                                               if not isinstance(e, asyncio.IncompleteReadError) else
                                               "service unavailable: the call port closed the connection",
                                               connect_failed=False))
