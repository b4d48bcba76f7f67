"""Frames between the local runtime's master and its executors over a Unix socket pair: a 4-byte
big-endian length, then that many bytes of one pickled message. Both ends are processes of the
same program started by the same user, so pickle is trusted here (never on a network socket)."""
from __future__ import annotations

import pickle
import socket
import struct

_HEADER = struct.Struct(">I")
MAX_FRAME = (1 << 31) - 1


class ChannelClosed(EOFError):
    """The other end closed the socket (its process ended)."""


def send(sock: socket.socket, message) -> None:
    """Writes one message as one frame."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    if len(data) > MAX_FRAME:
        raise ValueError(f"message of {len(data)} bytes is over the {MAX_FRAME}-byte frame limit")
    sock.sendall(_HEADER.pack(len(data)) + data)


def recv(sock: socket.socket):
    """Reads one message; ChannelClosed if the other end is gone."""
    (length,) = _HEADER.unpack(_read(sock, _HEADER.size))
    return pickle.loads(_read(sock, length))


def _read(sock: socket.socket, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ChannelClosed("the other end of the task channel closed it")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
