"""Makes one unary call through a generated stub method and maps its failure to a dataClay error."""
from __future__ import annotations

import grpc

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.rpc.errors import error_from_rpc


def unary(method, request, metadata, timeout=None, target=None):
    """Calls `method(request)`; a failed status raises the matching dataClay exception (explained
    by `target`, the ConnectionTarget the channel leads to, when it is given)."""
    try:
        return method(request, metadata=metadata, timeout=timeout)
    except grpc.RpcError as e:
        raise (error_from_rpc(e) if target is None else target.failure(e)) from None


def build(message_type, what: str, **fields):
    """`message_type(**fields)`, with a wrongly typed argument reported as InvalidArgumentError."""
    try:
        return message_type(**fields)
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(f"{what}: {e}") from None


def check_timeout(timeout) -> float | None:
    """A call deadline in seconds (None: no deadline)."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise InvalidArgumentError(f"timeout must be a positive number of seconds, not {timeout!r}")
    return float(timeout)


def server_stream(method, request, metadata, timeout=None, target=None):
    """Yields the messages of a server-streaming call; a failed status raises the matching dataClay
    exception, as `unary` does. Closing the generator cancels the call."""
    call = method(request, metadata=metadata, timeout=timeout)
    try:
        for message in call:
            yield message
    except grpc.RpcError as e:
        raise (error_from_rpc(e) if target is None else target.failure(e)) from None
    finally:
        call.cancel()


def client_stream(method, requests, metadata, timeout=None, target=None):
    """Sends the messages `requests` yields (as the transport takes them) and returns the answer; a
    failed status raises the matching dataClay exception. An exception raised by `requests` itself
    cancels the call and propagates unchanged."""
    failure = []

    def guarded():
        try:
            yield from requests
        except BaseException as e:  # kept, so the caller sees the producer's error, not a cancellation
            failure.append(e)
            raise

    try:
        return method(guarded(), metadata=metadata, timeout=timeout)
    except grpc.RpcError as e:
        if failure:
            raise failure[0] from None
        raise (error_from_rpc(e) if target is None else target.failure(e)) from None
