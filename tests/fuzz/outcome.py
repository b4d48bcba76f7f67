"""What one answer was, and what is wrong with it: the typed-error contract of docs/internals.md
(status code + `dataclay-error-bin` trailer holding an ErrorInfo) checked on every reply."""
from __future__ import annotations

import dataclasses
import re

import grpc

from dataclay._internal.proto import common_pb2
from dataclay._internal.rpc.errors import ERROR_TRAILER, status_code_for

# Exception class names of the servers' own languages: none may reach a caller outside a
# REMOTE_EXCEPTION (where user code raised and its type is the point).
_LEAK = re.compile(r"\b(?:java|javax|jdk|sun|com\.google|com\.esotericsoftware|io\.grpc|io\.netty|io\.dataclay)"
                   r"\.[\w.$]*(?:Exception|Error)\b|Traceback \(most recent call last\)|\n\s+at [\w.$]+\(")

# Codes a status may carry without a trailer (docs/internals.md, Errors): the size limit and
# a client-side deadline. Anything else without a trailer was not produced by our error mapping.
_UNTYPED_OK = {grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.DEADLINE_EXCEEDED}


@dataclasses.dataclass
class Outcome:
    """One reply: `label` is "OK" or the dataClay error code name (or the bare gRPC status when
    untyped); `problems` lists every way it breaks the contract."""
    label: str
    status: str
    message: str = ""
    remote_type: str = ""
    problems: list[str] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        """The call succeeded."""
        return self.label == "OK"


def success() -> Outcome:
    """A call that answered normally."""
    return Outcome("OK", "OK")


# What the HTTP/2 layer answers to request headers beyond the server's metadata limit: the
# connection is closed before any handler runs, so no typed error can be sent (a client still
# sending a long body when that happens sees the connection reset instead).
_HEADERS_TOO_LARGE = ("Header size exceeded max allowed size", "Connection reset by peer")


def from_error(error: grpc.RpcError, remote_allowed: bool, oversized_headers: bool = False) -> Outcome:
    """The outcome of a failed call; `remote_allowed`: REMOTE_EXCEPTION is legitimate for this RPC;
    `oversized_headers`: the call's metadata was beyond any server's limit."""
    code = error.code()
    status = code.name if code is not None else "NO_STATUS"
    details = error.details() or ""
    raw = next((v for k, v in (error.trailing_metadata() or ()) if k == ERROR_TRAILER), None)
    if raw is None and oversized_headers and any(words in details for words in _HEADERS_TOO_LARGE):
        return Outcome("headers-too-large", status, details)
    if raw is None:
        out = Outcome(f"untyped:{status}", status, details)
        if code not in _UNTYPED_OK:
            out.problems.append(f"status {status} without a dataclay-error-bin trailer: {details[:300]!r}")
        elif code == grpc.StatusCode.DEADLINE_EXCEEDED:
            out.problems.append("no answer before the deadline")
        return out
    try:
        info = common_pb2.ErrorInfo.FromString(raw)
        name = common_pb2.ErrorCode.Name(info.code)
    except Exception as e:  # a trailer that does not decode is a contract break of its own
        return Outcome("undecodable", status, details, problems=[f"undecodable error trailer: {e}"])
    out = Outcome(name, status, info.message, info.remote_type)
    if info.code == common_pb2.ERROR_UNSPECIFIED:
        out.problems.append("ErrorInfo without an error code")
    if status_code_for(name) != code:
        out.problems.append(f"{name} travelled with status {status}, not {status_code_for(name).name}")
    if info.code == common_pb2.INTERNAL:
        out.problems.append(f"INTERNAL: {info.message[:300]!r}")
    if info.code == common_pb2.REMOTE_EXCEPTION:
        if not remote_allowed:
            out.problems.append(f"REMOTE_EXCEPTION ({info.remote_type}) from an RPC that runs no user code")
    elif _LEAK.search(info.message):
        out.problems.append(f"{name} message names a server exception: {info.message[:300]!r}")
    return out
