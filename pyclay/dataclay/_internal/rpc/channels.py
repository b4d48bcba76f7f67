"""The gRPC channels every pyclay component uses: TLS trusting the cluster CA when one is
configured (else plaintext), no message size limit (objects can be large), a short reconnect
backoff so a restarted server is reached again quickly, and a bound on how long a silent server is
waited for (DATACLAY_UNREACHABLE_MS, see configure()). A call that fails to connect is explained
(ConnectionTarget.failure) when TLS is the cause."""
from __future__ import annotations

import grpc
import grpc.aio

from dataclay.exceptions import BackendUnavailableError, DataClayException, InvalidArgumentError
from dataclay._internal import tracing
from dataclay._internal.rpc.errors import ERROR_TRAILER, error_from_rpc
from dataclay._internal.rpc.tls import ClusterCa
from dataclay._internal.settings_table import DEFAULT_UNREACHABLE_MS

SESSION_KEY = "dataclay-session"

BASE_OPTIONS = (
    ("grpc.max_receive_message_length", -1),
    ("grpc.max_send_message_length", -1),
    # gRPC's default first reconnect wait is 1 s growing to 120 s; a Data Service restarted by
    # its supervisor is back within a second, so waiting minutes would stall every client.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2000),
    # Separate clients of one process must not share a TCP connection that one of them closes.
    ("grpc.use_local_subchannel_pool", 1),
)


def liveness_options(unreachable_ms: int) -> tuple:
    """Channel options that fail a call whose server stays silent for about `unreachable_ms` (0: never).
    While a call is in flight, the connection is pinged (HTTP/2 PING) every third of that time, and a
    ping unanswered for the rest of it closes the connection, failing its calls with UNAVAILABLE: a
    server that is merely slow answers pings and its call goes on, while one whose host was cut off,
    frozen or lost is given up in time to fail over, not after TCP's minutes. A connection attempt
    gives up after the same time (gRPC's minimum connect timeout is this option: 20 s by default).
    Idle connections are not pinged.

    grpc-core times an unanswered ping out after grpc.http2.ping_timeout_ms (a minute by default),
    not after the keepalive timeout, and sends one ping at a time: its bandwidth-estimation pings
    would hold the liveness ping back by up to another timeout (measured: 0.8-1.8 s instead of 1.2 s),
    so they are off (windows then stay at their initial size, ample on a cluster's network)."""
    if unreachable_ms <= 0:
        return ()
    every = max(100, unreachable_ms // 3)
    wait = max(100, unreachable_ms - every)
    return (("grpc.keepalive_time_ms", every),
            ("grpc.keepalive_timeout_ms", wait),
            ("grpc.http2.ping_timeout_ms", wait),
            ("grpc.http2.bdp_probe", 0),
            ("grpc.keepalive_permit_without_calls", 0),
            ("grpc.http2.max_pings_without_data", 0),
            ("grpc.min_reconnect_backoff_ms", unreachable_ms))


def configure(unreachable_ms: int) -> None:
    """Sets, for the channels this process opens from now on, how long a silent server is waited for
    (DATACLAY_UNREACHABLE_MS; 0: forever). Each entry point calls it with its configuration."""
    global CHANNEL_OPTIONS, _unreachable_s
    if isinstance(unreachable_ms, bool) or not isinstance(unreachable_ms, int) or unreachable_ms < 0:
        raise InvalidArgumentError(f"unreachable_ms must be a non-negative integer, not {unreachable_ms!r}")
    CHANNEL_OPTIONS = BASE_OPTIONS + liveness_options(unreachable_ms)
    _unreachable_s = unreachable_ms / 1000 if unreachable_ms else float("inf")


def unreachable_ms() -> int:
    """How long a silent server is waited for, in ms, as configure() set it (0: forever)."""
    return 0 if _unreachable_s == float("inf") else round(_unreachable_s * 1000)


def relayed() -> bool:
    """Whether this process's channels are relayed (an execution environment: no network of its own)."""
    return _relay is not None


def went_silent(seconds: float) -> bool:
    """Whether a call that failed after `seconds` was failed by the liveness bound, its server silent
    (unreachable, frozen or gone) rather than refusing or restarting: it is not asked again at once."""
    return seconds >= 0.75 * _unreachable_s


configure(DEFAULT_UNREACHABLE_MS)


# grpc-core's words for failures that happen before any TLS: nothing a handshake could explain
_NOT_REACHED = ("Connection refused", "DNS resolution failed", "No route to host", "Network is unreachable",
                # silence: a connection that was made and then went unanswered, or one never answered at
                # all, is no TLS problem (and a handshake of our own would wait on the silent server too)
                "ping timeout", "keepalive", "imeout", "timed out")


_relay = None


def relay_through(opener) -> None:
    """Makes every channel this process opens from now on `opener(address, aio)` instead of a network
    channel: an execution environment, which has no network, relays its calls over its link."""
    global _relay
    _relay = opener


def open_channel(address: str, tls: ClusterCa | None = None, server_name: str | None = None) -> grpc.Channel:
    """A channel to `address` ("host:port"): TLS trusting `tls` only (plaintext when None), the
    server's certificate checked against `server_name` (default: the host of `address`)."""
    check_address(address)
    if _relay is not None:
        return _relay(address, False)
    if tls is None:
        channel = grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
    else:
        options = CHANNEL_OPTIONS + ((("grpc.ssl_target_name_override", server_name),) if server_name else ())
        channel = grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=tls.pem), options=options)
    traced, _ = tracing.interceptors()
    return channel if traced is None else traced(channel)


def open_aio_channel(address: str, tls: ClusterCa | None = None, server_name: str | None = None) -> grpc.aio.Channel:
    """The asyncio twin of open_channel, bound to the running event loop (gRPC's aio channels serve the
    loop they were made in only)."""
    check_address(address)
    if _relay is not None:
        return _relay(address, True)
    _, traced = tracing.interceptors()
    if tls is None:
        return grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS, interceptors=traced or None)
    options = CHANNEL_OPTIONS + ((("grpc.ssl_target_name_override", server_name),) if server_name else ())
    return grpc.aio.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=tls.pem), options=options,
                                   interceptors=traced or None)


LOGIC_MODULE, DATA_SERVICE = "the Logic Module", "the backend"
# what to do when a server cannot be reached at all
_ADVICE = {
    LOGIC_MODULE: "is the cluster running? Start one with 'dataclay start', or set DATACLAY_HOST/DATACLAY_PORT "
                  "(or DATACLAY_HOME, whose client.properties names the cluster)",
    DATA_SERVICE: "is it running? 'dataclay status' shows which servers are up; 'dataclay start' restarts a local "
                  "cluster's",
}
_REFUSED = "Connection refused"
_NO_HOST = ("DNS resolution failed", "errors resolving", "Domain name not found", "Name or service not known")


class ConnectionTarget:
    """Where a client connects and how; turns a failed call into the dataClay error to raise. `server`
    says what listens there (LOGIC_MODULE, DATA_SERVICE), for the message when nothing does."""

    def __init__(self, address: str, tls: ClusterCa | None = None, server_name: str | None = None,
                 server: str = ""):
        self.address = check_address(address)
        self.tls = tls
        self.server_name = server_name
        self.server = server

    def open(self) -> grpc.Channel:
        """A new channel to this target."""
        return open_channel(self.address, self.tls, self.server_name)

    def open_aio(self) -> grpc.aio.Channel:
        """A new asyncio channel to this target, bound to the running event loop."""
        return open_aio_channel(self.address, self.tls, self.server_name)

    def failure(self, error: grpc.RpcError) -> DataClayException:
        """The exception for a failed call: what the server answered, or, when the connection
        could not be made for a reason of TLS, a BackendUnavailableError naming that reason."""
        mapped, may_be_tls = self.unprobed_failure(error)
        return self.tls_failure(mapped) if may_be_tls else mapped

    def unprobed_failure(self, error: grpc.RpcError) -> tuple[DataClayException, bool]:
        """The exception for a failed call as far as it is known without connecting again, and whether
        a TLS problem may be behind it (then tls_failure, which blocks on a handshake, says)."""
        mapped = error_from_rpc(error)
        unreached = self.unreached(error, mapped)
        if unreached is not None:
            return unreached, False
        return mapped, self.may_be_tls(error, mapped)

    def tls_failure(self, mapped: DataClayException) -> DataClayException:
        """`mapped`, or a BackendUnavailableError naming the TLS reason the connection failed, found by a
        blocking TLS handshake with the target."""
        from dataclay._internal.rpc import tls_probe
        reason = tls_probe.explain(self.address, self.tls, self.server_name)
        if reason is None:
            return mapped
        return BackendUnavailableError(f"service unavailable: {reason}", connect_failed=mapped.connect_failed)

    def unreached(self, error: grpc.RpcError, mapped: DataClayException) -> BackendUnavailableError | None:
        """For a call that could not connect because nothing listens at the address or its host has no
        address: a BackendUnavailableError saying so and what to do (gRPC's own words are noise). Else None."""
        if not isinstance(mapped, BackendUnavailableError) or error.code() != grpc.StatusCode.UNAVAILABLE:
            return None
        if any(key == ERROR_TRAILER for key, _ in (error.trailing_metadata() or ())):
            return None
        details = error.details() or ""
        if _REFUSED in details:
            reason = "connection refused"
        elif any(words in details for words in _NO_HOST):
            reason = f"no host named {self.address.rpartition(':')[0]!r}"
        else:
            return None
        server = self.server or "the server"
        advice = _ADVICE.get(self.server, "is it running?")
        return BackendUnavailableError(f"cannot reach {server} at {self.address} ({reason}): {advice}",
                                       connect_failed=True)

    @staticmethod
    def may_be_tls(error: grpc.RpcError, mapped: DataClayException) -> bool:
        """Whether TLS may explain a failed call (then failure() makes a handshake of its own to tell):
        the connection failed for another reason than a refusal or an unknown host."""
        if not isinstance(mapped, BackendUnavailableError) or error.code() != grpc.StatusCode.UNAVAILABLE:
            return False
        details = error.details() or ""
        return not (any(key == ERROR_TRAILER for key, _ in (error.trailing_metadata() or ())) or
                    any(words in details for words in _NOT_REACHED))


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
