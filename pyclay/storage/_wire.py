"""Frames between the local runtime's master and its executors over a Unix socket pair: a 4-byte
big-endian length, then that many bytes of one pickled message (rpc/framing.py). Both ends are
processes of the same program started by the same user, so pickle is trusted here (never on a
network socket)."""
from __future__ import annotations

import pickle
import socket

from dataclay._internal.rpc.framing import frame, read_frame


class ChannelClosed(EOFError):
    """The other end closed the socket (its process ended)."""


def send(sock: socket.socket, message) -> None:
    """Writes one message as one frame; ValueError (nothing sent) if it is over the frame limit."""
    sock.sendall(frame(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)))


def recv(sock: socket.socket):
    """Reads one message; ChannelClosed if the other end is gone."""
    return pickle.loads(read_frame(lambda n: _read(sock, n)))


def _read(sock: socket.socket, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ChannelClosed("the other end of the task channel closed it")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
