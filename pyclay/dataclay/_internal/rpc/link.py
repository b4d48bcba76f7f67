"""The execution environment's end of its link to the Data Service: length-prefixed protobuf frames
over the Unix domain socket the Data Service listens on (DATACLAY_EE_SOCKET). Each frame is a
4-byte unsigned big-endian length N (at most 2^31-1) and N bytes of one serialised message:
EnvironmentMessage from the environment, DataServiceMessage from the Data Service."""
from __future__ import annotations

import socket
import threading

from google.protobuf.message import DecodeError

from dataclay.exceptions import SerializationError
from dataclay._internal.proto import executionenv_pb2 as ee_pb2

MAX_FRAME = 2**31 - 1
READ_BUFFER = 256 * 1024
# Below this a frame goes out as one send of header + body (one syscall, a cheap copy); above it,
# two sends under the same lock, so a large body is never copied just to prepend four bytes.
_JOIN_LIMIT = 64 * 1024
_HEADER = 4


class LinkProtocolError(Exception):
    """The Data Service sent something that is not a well-formed frame of a DataServiceMessage."""


class LinkClosedError(Exception):
    """The link can no longer carry frames (closed by either side, or the socket failed)."""


class DataServiceLink:
    """A connected link. receive() is for one reader at a time (callers serialise it); send() may be
    called from any thread: a whole frame is written under one lock, so frames never interleave."""

    def __init__(self, sock: socket.socket):
        self._socket = sock
        # Buffered reads: a small frame costs no syscall when it arrived with others, and a large
        # body is read by the C buffered reader straight into its result (recv_into, no per-byte work).
        self._reader = sock.makefile("rb", buffering=READ_BUFFER)
        self._write_lock = threading.Lock()
        self._writable = True

    @classmethod
    def connect(cls, path: str) -> "DataServiceLink":
        """Connects to the Data Service's socket at `path`; raises LinkClosedError naming the path if it cannot."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
        except OSError as e:
            sock.close()
            raise LinkClosedError(f"cannot connect to the Data Service socket {path!r}: {e}") from None
        return cls(sock)

    def send_hello(self, pid: int, runtime_version: str, secret: str) -> None:
        """Sends the handshake frame that must come first: who this environment is and the spawn secret."""
        self.send(ee_pb2.EnvironmentMessage(hello=ee_pb2.EnvironmentHello(
            pid=pid, runtime_version=runtime_version, secret=secret)))

    def send(self, message: ee_pb2.EnvironmentMessage) -> None:
        """Writes `message` as one frame; LinkClosedError if the link is closed for writing, and
        SerializationError (before writing anything) if `message` cannot be one frame."""
        try:
            body = message.SerializeToString()
        except Exception as e:  # upb refuses messages over 2 GiB, among others
            raise SerializationError(f"cannot encode the message for the Data Service: {e}") from None
        if len(body) > MAX_FRAME:
            raise SerializationError(f"a message of {len(body)} bytes exceeds the {MAX_FRAME}-byte frame limit")
        header = len(body).to_bytes(_HEADER, "big")
        with self._write_lock:
            if not self._writable:
                raise LinkClosedError("the link to the Data Service is closed for writing")
            try:
                if len(body) <= _JOIN_LIMIT:
                    self._socket.sendall(header + body)
                else:
                    self._socket.sendall(header)
                    self._socket.sendall(body)
            except OSError as e:
                # A partly written frame leaves the stream unusable: nothing more may follow it.
                self._writable = False
                raise LinkClosedError(f"writing to the Data Service failed: {e}") from None

    def receive(self) -> ee_pb2.DataServiceMessage | None:
        """The next DataServiceMessage, or None at end of stream (the Data Service closed the link).

        LinkProtocolError for a malformed frame or message, LinkClosedError if the socket failed."""
        try:
            header = self._reader.read(_HEADER)
            if not header:
                return None
        except ConnectionResetError:  # the Data Service closed with bytes we had not read: also an end
            return None
        except (OSError, ValueError) as e:  # ValueError: the reader was closed under us
            raise LinkClosedError(f"reading from the Data Service failed: {e}") from None
        try:
            if len(header) < _HEADER:
                raise LinkProtocolError(f"the link ended inside a frame header ({len(header)} of 4 bytes)")
            size = int.from_bytes(header, "big")
            if size > MAX_FRAME:
                raise LinkProtocolError(f"frame length {size} exceeds the {MAX_FRAME}-byte limit")
            body = self._reader.read(size) if size else b""
        except (OSError, ValueError) as e:  # ValueError: the reader was closed under us
            raise LinkClosedError(f"reading from the Data Service failed: {e}") from None
        if len(body) < size:
            raise LinkProtocolError(f"the link ended inside a frame ({len(body)} of {size} bytes)")
        message = ee_pb2.DataServiceMessage()
        try:
            message.ParseFromString(body)
        except DecodeError as e:
            raise LinkProtocolError(f"a {size}-byte frame is not a DataServiceMessage: {e}") from None
        return message

    def finish_sending(self) -> None:
        """Half-closes the link (shutdown(SHUT_WR)) once the frame being written is out: the Data Service
        sees end of stream after our last frame. Later sends raise LinkClosedError."""
        with self._write_lock:
            if not self._writable:
                return
            self._writable = False
            try:
                self._socket.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # already disconnected: the Data Service sees end of stream anyway

    def close(self) -> None:
        """Closes both directions; a thread blocked in receive() sees end of stream or LinkClosedError."""
        with self._write_lock:
            self._writable = False
        try:
            self._socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # not connected any more: closing below is all that is left
        # The reader holds a reference to the socket: the descriptor is released when both are closed.
        self._reader.close()
        self._socket.close()
