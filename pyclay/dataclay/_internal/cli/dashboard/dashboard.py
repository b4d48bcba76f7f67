"""`dataclay dashboard`: serves the web dashboard for the cluster the client configuration names,
until Ctrl-C or SIGTERM; `dataclay locate`: where an object lives, as the dashboard's search shows it.

TLS: with --cert and --key, those; else, when the local cluster of $DATACLAY_HOME runs TLS, a
certificate for the dashboard from its private CA; else plain HTTP, which is allowed on loopback
only, as for the metrics endpoints."""
from __future__ import annotations

import json
import logging
import signal
import socket
import ssl
import sys
import threading

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.cli.common.cluster_state import ClusterState
from dataclay._internal.cli.common.settings import ClusterSettings
from dataclay._internal.cli.dashboard import cluster_views
from dataclay._internal.cli.dashboard.call_history import CallHistory
from dataclay._internal.cli.dashboard.sampler import Sampler
from dataclay._internal.cli.dashboard.web_server import Dashboard, DashboardServer, is_loopback
from dataclay._internal.cli.dashboard.web_sessions import SessionTable
from dataclay._internal.cli.local.certificates import LOCAL_NAMES
from dataclay._internal.cli.local.launcher import LocalCluster
from dataclay._internal.config import Config

DEFAULT_PORT = 8765
DEFAULT_IDLE_MINUTES = 30.0
DEFAULT_SAMPLE_SECONDS = 5.0
DEFAULT_HISTORY_MINUTES = 15.0


def add_arguments(parser) -> None:
    """The options of `dataclay dashboard`."""
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1; any other needs TLS)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    parser.add_argument("--cert", metavar="PEM", default=None, help="serve HTTPS with this certificate chain")
    parser.add_argument("--key", metavar="PEM", default=None, help="... and this private key")
    parser.add_argument("--idle-minutes", type=float, default=DEFAULT_IDLE_MINUTES, metavar="M",
                        help=f"log a browser out after M minutes without a request (default {DEFAULT_IDLE_MINUTES:g})")
    parser.add_argument("--sample-seconds", type=float, default=DEFAULT_SAMPLE_SECONDS, metavar="S",
                        help=f"ask the servers for their call figures every S seconds (default "
                             f"{DEFAULT_SAMPLE_SECONDS:g})")
    parser.add_argument("--history-minutes", type=float, default=DEFAULT_HISTORY_MINUTES, metavar="M",
                        help=f"how far back the call charts go (default {DEFAULT_HISTORY_MINUTES:g})")


def serve(args) -> int:
    """Runs `dataclay dashboard` until interrupted; returns the exit code."""
    _check(args)
    config = Config.load()
    context, certificate = _tls_context(args, config)
    if context is None and not is_loopback(args.host):
        raise InvalidArgumentError(f"--host {args.host} exposes the dashboard beyond this machine, which needs TLS: "
                                   f"give --cert and --key, or start the cluster with `dataclay start --tls`")
    cluster = cluster_views.Cluster(f"{config.host}:{config.port}", config.tls, timeout=5.0)
    sessions = SessionTable(idle=args.idle_minutes * 60)
    history = CallHistory(keep=max(2, int(args.history_minutes * 60 / args.sample_seconds)))
    credentials = (config.user, config.password) if config.user and config.password else None
    dashboard = Dashboard(cluster, sessions, history, tls=context is not None, loopback_only=is_loopback(args.host))
    try:
        server = DashboardServer((args.host, args.port), dashboard, context)
    except OSError as e:
        raise InvalidArgumentError(f"cannot listen on {args.host}:{args.port}: {e.strerror or e}; choose another "
                                   f"--port") from None
    sampler = Sampler(cluster, sessions, history, args.sample_seconds, credentials)
    sampler.start()
    scheme = "https" if context is not None else "http"
    shown = "localhost" if is_loopback(args.host) else args.host
    print(f"dataClay dashboard on {scheme}://{shown}:{server.server_address[1]}/ for the Logic Module at "
          f"{cluster.lm_address}; log in with an administrator account. Ctrl-C stops it.", flush=True)
    if certificate:
        print(f"its certificate: {certificate} (issued by the cluster's CA)", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        sampler.stop()
        for token in sessions.tokens():
            try:
                cluster.lm(token).close_session(timeout=5.0)
            except Exception:  # noqa: BLE001 - closing on the way out; the sessions expire anyway
                pass
        cluster.close()
    return 0


def _check(args) -> None:
    if not 0 < args.port < 65536:
        raise InvalidArgumentError(f"--port must be 1-65535, not {args.port}")
    if (args.cert is None) != (args.key is None):
        raise InvalidArgumentError("give both --cert and --key, or neither")
    for name in ("idle_minutes", "sample_seconds", "history_minutes"):
        value = getattr(args, name)
        if not 0 < value < float("inf"):
            raise InvalidArgumentError(f"--{name.replace('_', '-')} must be a positive number, not {value}")
    if args.sample_seconds > args.history_minutes * 60:
        raise InvalidArgumentError("--sample-seconds must be shorter than --history-minutes")


def _tls_context(args, config: Config) -> tuple[ssl.SSLContext | None, str]:
    """The server's TLS context, and the certificate it was issued from the cluster's CA (if it was)."""
    cert, key, issued = args.cert, args.key, ""
    if cert is None:
        settings = ClusterSettings.from_env()
        state = ClusterState.load(settings.home) if settings.home.is_dir() else None
        if state is not None and state.tls:
            hosts = list(LOCAL_NAMES) + [h for h in (args.host, socket.gethostname())
                                         if h not in LOCAL_NAMES and h not in ("0.0.0.0", "::", "")]
            pair = LocalCluster(settings).certificates.server("dashboard", hosts)
            cert, key, issued = str(pair.cert), str(pair.key), str(pair.cert)
        elif config.tls is not None:
            if not is_loopback(args.host):
                raise InvalidArgumentError("the cluster uses TLS and no local CA can issue the dashboard a certificate: "
                                           "give --cert and --key")
            return None, ""
        else:
            return None, ""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as e:
        raise InvalidArgumentError(f"cannot use the certificate {cert} with the key {key}: {e}") from None
    return context, issued


def locate(query: str) -> int:
    """`dataclay locate`: prints /api/v1/locate's document for `query`, in the configured account's session."""
    config = Config.load()
    if not (config.user and config.password):
        raise InvalidArgumentError("no credentials: set DATACLAY_USER and DATACLAY_PASSWORD, or use the "
                                   "client.properties `dataclay start` wrote")
    cluster = cluster_views.Cluster(f"{config.host}:{config.port}", config.tls, timeout=10.0)
    lm = cluster.lm(None)
    try:
        token = lm.new_session(config.user, config.password, "").token
        try:
            print(json.dumps(cluster_views.locate(cluster, token, query), indent=2))
        finally:
            cluster.lm(token).close_session(timeout=5.0)
    finally:
        cluster.close()
    return 0


def configure_logging() -> None:
    """The dashboard's own lines (log-ins, refusals, failed samples) go to standard error."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log = logging.getLogger("dataclay.dashboard")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False

