"""The gRPC channels every pyclay component uses: plaintext, no message size limit (objects can
be large), and a short reconnect backoff so a restarted server is reached again quickly."""
from __future__ import annotations

import grpc

from dataclay.exceptions import InvalidArgumentError

SESSION_KEY = "dataclay-session"

CHANNEL_OPTIONS = (
    ("grpc.max_receive_message_length", -1),
    ("grpc.max_send_message_length", -1),
    # gRPC's default first reconnect wait is 1 s growing to 120 s; a Data Service restarted by
    # its supervisor is back within a second, so waiting minutes would stall every client.
    # (Not grpc.min_reconnect_backoff_ms: gRPC also uses it as the connect timeout.)
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2000),
    # Separate clients of one process must not share a TCP connection that one of them closes.
    ("grpc.use_local_subchannel_pool", 1),
)


def open_channel(address: str) -> grpc.Channel:
    """A channel to `address` ("host:port")."""
    check_address(address)
    return grpc.insecure_channel(address, options=CHANNEL_OPTIONS)


def check_address(address) -> str:
    """Returns `address` if it looks like host:port, else raises InvalidArgumentError."""
    if not isinstance(address, str):
        raise InvalidArgumentError(f"address must be a 'host:port' string, not {type(address).__name__}")
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InvalidArgumentError(f"address must be 'host:port', not {address!r}")
    return address


def session_metadata(token: str | None) -> tuple:
    """The metadata an authenticated call carries (empty without a token)."""
    if token is None:
        return ()
    if not isinstance(token, str):
        raise InvalidArgumentError(f"token must be a string, not {type(token).__name__}")
    return ((SESSION_KEY, token),)
