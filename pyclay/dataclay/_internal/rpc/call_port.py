"""The call port of a Data Service (dataservice.proto: CallPort, CallFrame, CallReply): method calls
and field reads and writes as length-prefixed frames on a plain (or TLS) socket instead of gRPC
calls, which cost a Python client 140-170 µs of CPU each against about 20 for a frame
(benchmarks/transport_floor.py). Each thread of a process has its own blocking connection per
session, opened in that session by its first frame; calls on it go one at a time.

A server that goes silent is told from a slow call as gRPC's keepalive tells it: the connection asks
the server to send an empty frame every third of DATACLAY_UNREACHABLE_MS while a call waits, and
gives the call up when nothing came for that long. Errors are the dataClay errors a gRPC call raises.
A connection that cannot be made is not an error: the caller falls back to gRPC (`Unusable`)."""
from __future__ import annotations

import os
import select
import socket
import ssl
import struct
import threading
import time
import weakref

from dataclay.exceptions import BackendUnavailableError, DataClayException, InternalError
from dataclay._internal.proto import dataservice_pb2 as ds_pb2
from dataclay._internal.rpc import channels
from dataclay._internal.rpc.errors import error_from_info
from dataclay._internal.rpc.tls import ClusterCa

_HEADER = struct.Struct(">I")
_CallFrame = ds_pb2.CallFrame
_CallReply = ds_pb2.CallReply
_READ = 1 << 16
RETRY_AFTER_S = 10.0
"""How long a call port that could not be reached is left alone (calls go over gRPC meanwhile)."""
OPEN_WAIT_S = 10.0
"""The longest a connection may take to be made and opened, whatever DATACLAY_UNREACHABLE_MS says."""
_RESET_AT_FORK = weakref.WeakSet()
"""Every CallPort and CallPortLookup of this process: a fork's child gets fresh locks for them."""


def _after_fork_in_child() -> None:
    # a lock another thread of the parent held at the fork stays held in the child, where that thread
    # does not exist: the child's first call would wait on it for ever
    for holder in list(_RESET_AT_FORK):
        holder._after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)


class Unusable(Exception):
    """The call port could not be reached: the call was not sent, make it over gRPC."""


def liveness(keepalive_ms: int | None) -> tuple[int, float | None]:
    """(how often a waiting call asks to hear from the server in ms, at least 100, 0: never; the silence
    after which it gives up in s, None: never) from `keepalive_ms`, by default a third of
    DATACLAY_UNREACHABLE_MS."""
    if keepalive_ms is None:
        keepalive_ms = channels.unreachable_ms() // 3
    if keepalive_ms <= 0:
        return 0, None
    keepalive_ms = max(100, keepalive_ms)
    return keepalive_ms, 3 * keepalive_ms / 1000


class CallPort:
    """The call port at `host`:`port` (TLS trusting `tls` when given, the certificate checked against
    `server_name`); `keepalive_ms` is how often a waiting call hears from a live server (0: calls wait
    forever), and a call gives up after three times that of silence."""

    def __init__(self, host: str, port: int, tls: ClusterCa | None = None, server_name: str | None = None,
                 keepalive_ms: int | None = None):
        self.address = (host, port)
        self._server_name = server_name or host
        self._ssl = _client_context(tls) if tls is not None else None
        self._keepalive_ms, self._silence_s = liveness(keepalive_ms)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: set[_Connection] = set()
        self._closed = False
        _RESET_AT_FORK.add(self)

    def _after_fork(self) -> None:
        """In a fork's child: a lock of its own, and none of the parent's connections (left open for
        the parent, unused here; see _Connection.usable)."""
        self._lock = threading.Lock()
        self._connections = set()

    def call(self, token: str, frame) -> bytes:
        """Sends `frame` (a CallFrame holding one call; its id is set here) in the session `token` and
        returns the reply's value. Raises the call's dataClay error, BackendUnavailableError when the
        connection broke or went silent while the call waited (it may have run), or Unusable when no
        connection could be made (nothing was sent)."""
        connection = self._connection(token)
        try:
            return connection.call(frame)
        finally:
            with self._lock:
                connection.busy = False
                retired = self._closed
            # a connection the transport failed is dropped; one whose call merely failed stays
            if retired or connection.closed:
                self._drop(connection)

    def close(self) -> None:
        """Closes the connections of every thread: idle ones now, and one a call is using once that call
        has its answer, so that no other thread's call fails for it; later calls raise Unusable."""
        with self._lock:
            self._closed = True
            idle = {c for c in self._connections if not c.busy}
            self._connections -= idle
        for c in idle:
            c.close()

    def _connection(self, token: str) -> "_Connection":
        mine = getattr(self._local, "connections", None)
        if mine is None:
            mine = self._local.connections = {}
        connection = mine.get(token)
        if connection is not None and connection.usable():
            with self._lock:
                if not self._closed:
                    connection.busy = True
                    return connection
        if connection is not None:
            if connection.pid != os.getpid():
                del mine[token]  # the parent's: left open for it, and this process's lock is not taken
            else:
                self._drop(connection)
        if self._closed:
            raise Unusable()
        try:
            connection = _Connection.open(self.address, self._ssl, self._server_name, token, self._keepalive_ms,
                                          self._silence_s)
        except (OSError, ssl.SSLError):
            raise Unusable() from None
        with self._lock:
            if self._closed:
                connection.close()
                raise Unusable()
            # the connections of threads that ended are closed as new ones open: a program that runs
            # its calls on ever new threads keeps as many connections as it has threads alive
            ended = {c for c in self._connections if not c.thread.is_alive()}
            self._connections -= ended
            self._connections.add(connection)
            connection.busy = True
        for c in ended:
            c.close()
        mine[token] = connection
        return connection

    def _drop(self, connection: "_Connection") -> None:
        connection.close()
        with self._lock:
            self._connections.discard(connection)
        mine = getattr(self._local, "connections", {})
        if mine.get(connection.token) is connection:
            del mine[connection.token]


class PortQuestion:
    """What a client knows of whether a backend serves a call port: asked once (GetCallPort); not asked
    again once it said none is served, nor for RETRY_AFTER_S after asking failed or the port could not
    be reached."""

    def __init__(self):
        self.served = True
        self._ask_after = 0.0

    def may_ask(self) -> bool:
        return self.served and time.monotonic() >= self._ask_after

    def failed(self) -> None:
        """Asking failed, or the port named could not be reached: ask again after RETRY_AFTER_S."""
        self._ask_after = time.monotonic() + RETRY_AFTER_S

    def answered(self, number: int) -> bool:
        """The backend named port `number` (0: none served, never asked again); whether to use it."""
        if not number:
            self.served = False
        return bool(number)


class CallPortLookup:
    """Whether a Data Service client's backend serves a call port, asked once (GetCallPort over gRPC)
    and shared by the clients of one channel (with_token siblings): `port()` is the CallPort, or None
    while calls go over gRPC (not served; or asking failed, asked again after RETRY_AFTER_S)."""

    def __init__(self, host: str, tls: ClusterCa | None, server_name: str | None):
        self._host = host
        self._tls = tls
        self._server_name = server_name
        self._lock = threading.Lock()
        self._port: CallPort | None = None
        self._question = PortQuestion()
        self._asking = False  # a thread is asking the backend for the port's number
        _RESET_AT_FORK.add(self)

    def _after_fork(self) -> None:
        self._lock = threading.Lock()
        self._asking = False  # the thread that asked is the parent's

    def port(self, ask) -> CallPort | None:
        """The call port, asking `ask()` (the port number; a DataClayException when it cannot say) the first
        time. One thread asks; the others' calls go over gRPC meanwhile instead of waiting for its answer."""
        port = self._port
        if port is not None or not self._question.may_ask():
            return port
        number, mine = None, False
        try:
            with self._lock:
                if self._port is not None or self._asking or not self._question.may_ask():
                    return self._port
                mine = True  # before the flag: whatever interrupts from here on, the finally clears it
                self._asking = True
            number = ask()
        except DataClayException:
            pass  # asked again after a while
        finally:
            if mine:
                with self._lock:
                    self._asking = False
                    if number is None:
                        self._question.failed()
                    elif self._question.answered(number) and self._question.served:
                        self._port = CallPort(self._host, number, self._tls, self._server_name)
        return self._port

    def unusable(self, port: CallPort) -> None:
        """`port` could not be reached: calls go over gRPC for RETRY_AFTER_S, then the backend is asked
        again (a backend that restarted listens on another port)."""
        with self._lock:
            if self._port is port:
                self._port = None
                self._question.failed()
        port.close()

    def close(self) -> None:
        with self._lock:
            port, self._port, self._question.served = self._port, None, False
        if port is not None:
            port.close()


class _Connection:
    """One socket opened in the session `token`, used by one thread of one process."""

    def __init__(self, sock, token: str, silence_s: float | None):
        self.sock = sock
        self.token = token
        self.pid = os.getpid()
        self.thread = threading.current_thread()
        self._silence_s = silence_s
        self._next_id = 1
        self._buffer = bytearray()
        self._closed = False
        self.busy = False  # a call of its thread is using it; guarded by its CallPort's lock

    @property
    def closed(self) -> bool:
        return self._closed

    @classmethod
    def open(cls, address, context, server_name, token, keepalive_ms, silence_s) -> "_Connection":
        """Connects and opens the connection in `token`'s session; OSError when it cannot connect,
        the server's dataClay error when it refuses the session."""
        # whatever answers there gets at most OPEN_WAIT_S to connect, shake hands and open
        wait = min(silence_s or OPEN_WAIT_S, OPEN_WAIT_S)
        sock = socket.create_connection(address, timeout=wait)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if context is not None:
                sock = context.wrap_socket(sock, server_hostname=server_name)
        except BaseException:
            sock.close()
            raise
        connection = cls(sock, token, wait)
        try:
            connection.call(_CallFrame(open=ds_pb2.OpenCalls(session=token, keepalive_ms=keepalive_ms)))
        except (BackendUnavailableError, InternalError) as e:
            connection.close()
            raise OSError(str(e)) from None  # no session was opened: the caller falls back to gRPC
        except BaseException:
            connection.close()
            raise
        connection.silence(silence_s)
        return connection

    def silence(self, seconds: float | None) -> None:
        """Gives a call up after `seconds` without a frame (None: never)."""
        self._silence_s = seconds
        self.sock.settimeout(seconds)

    def usable(self) -> bool:
        """Whether a call may be sent: open, made by this process (a fork's child shares the parent's
        sockets and must not use them), and not closed by the server while it was idle."""
        if self._closed or self.pid != os.getpid():
            return False
        if self._buffer or not _readable(self.sock):
            return True
        # readable while idle: a keepalive sent as the last call ended, or the server's close
        try:
            self._fill(blocking=False)
        except (OSError, BackendUnavailableError):
            return False
        return True

    def call(self, frame) -> bytes:
        """Sends `frame` and waits for its reply (see CallPort.call)."""
        call_id = frame.id = self._next_id
        self._next_id += 1
        data = frame.SerializeToString()
        try:
            self._send(_HEADER.pack(len(data)) + data)
        except OSError as e:
            where = _where(self.sock)
            refusal = self._closing_error()
            self.close()
            if refusal is not None:
                raise refusal from None
            raise BackendUnavailableError(f"the call port at {where} closed the connection: {e}",
                                          connect_failed=False) from None
        while True:
            reply = self._read_reply()
            if reply.id == call_id:
                break
            if reply.HasField("error"):  # id 0: the server ends the connection, saying why
                self.close()
                raise error_from_info(reply.error)
            if reply.id != 0:
                self.close()
                raise InternalError(f"the call port answered call {reply.id} while call {call_id} waited")
        if reply.HasField("error"):
            raise error_from_info(reply.error)
        return reply.value

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.sock.close()

    def _send(self, data: bytes) -> None:
        # sendall's timeout bounds the whole of a send; this bounds each step of it, so a large frame
        # to a live server that reads slowly is not taken for a silent one
        view = memoryview(data)
        while view:
            view = view[self.sock.send(view):]

    def _closing_error(self) -> DataClayException | None:
        """The error the server sent before it closed the connection (such as a frame over its size
        limit, refused while this side was still writing it), if it arrived."""
        try:
            self.sock.settimeout(0.1)
            while True:
                reply = self._read_reply()
                if reply.id == 0 and reply.HasField("error"):
                    return error_from_info(reply.error)
        except (OSError, DataClayException):
            return None

    def _read_reply(self):
        buffer = self._buffer
        while len(buffer) < 4:
            self._fill()
        (size,) = _HEADER.unpack_from(buffer)
        while len(buffer) < 4 + size:
            self._fill()
        try:
            reply = _CallReply.FromString(bytes(buffer[4:4 + size]))
        except Exception as e:
            self.close()
            raise InternalError(f"the call port sent an unreadable reply: {e}") from None
        del buffer[:4 + size]
        return reply

    def _fill(self, blocking: bool = True) -> None:
        try:
            if not blocking:
                self.sock.setblocking(False)
            try:
                chunk = self.sock.recv(_READ)
            finally:
                if not blocking:
                    self.sock.settimeout(self._silence_s)
        except (BlockingIOError, ssl.SSLWantReadError):
            return
        except socket.timeout:
            self.close()
            raise BackendUnavailableError(f"service unavailable: the call port went silent for {self._silence_s:g} s"
                                          f" (DATACLAY_UNREACHABLE_MS)", connect_failed=False) from None
        except OSError as e:
            self.close()
            raise BackendUnavailableError(f"service unavailable: the call port's connection broke: {e}",
                                          connect_failed=False) from None
        if not chunk:
            self.close()
            raise BackendUnavailableError("service unavailable: the call port closed the connection",
                                          connect_failed=False)
        self._buffer += chunk


def _readable(sock) -> bool:
    if isinstance(sock, ssl.SSLSocket) and sock.pending():
        return True
    readable, _, _ = select.select((sock,), (), (), 0)
    return bool(readable)


def _where(sock) -> str:
    try:
        host, port = sock.getpeername()[:2]
        return f"{host}:{port}"
    except OSError:
        return "its address"


def _client_context(tls: ClusterCa) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cadata=tls.pem.decode("ascii"))
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context

