"""What `dataclay status` shows: the Logic Module, then every backend with its liveness, engine,
durability promise, pool use, object count, whether its stored values are encrypted, and its
execution environments."""
from __future__ import annotations

import json
import pathlib
from dataclasses import asdict, dataclass, field

from dataclay.exceptions import DataClayException
from dataclay._internal.cli.common.cluster_state import ClusterState
from dataclay._internal.config import Config
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient

TIMEOUT = 3.0  # default of `dataclay status --timeout`: how long each server may take to answer

# `dataclay status` exit codes
EXIT_UP, EXIT_LM_DOWN, EXIT_BACKEND_DOWN = 0, 1, 3


@dataclass
class BackendLine:
    """One backend as the Logic Module registers it and as it describes itself."""

    name: str
    backend_id: str
    address: str
    alive: bool
    engine: str = "?"
    durability: str = ""
    objects: int | None = None
    collected: int = 0
    used: int = 0
    capacity: int = 0
    encrypted: bool = False
    environments: list[str] = field(default_factory=list)
    problem: str = ""


@dataclass
class StatusReport:
    """The whole cluster as seen from this machine's client configuration."""

    lm_address: str
    lm_alive: bool
    tls: str = "off (plaintext)"
    lm_version: str = ""
    metadata: str = ""
    objects: int = 0
    aliases: int = 0
    sessions: int = 0
    collected: int = 0
    backends: list[BackendLine] = field(default_factory=list)
    problem: str = ""


def collect_status(home: pathlib.Path, state: ClusterState | None, timeout: float = TIMEOUT) -> StatusReport:
    """Asks the Logic Module and every backend, each given `timeout` seconds; a part that does not answer
    is reported as such."""
    config = Config.load()
    address = f"{config.host}:{config.port}"
    report = StatusReport(lm_address=address, lm_alive=False)
    if state is not None:
        report.metadata = state.metadata_url or f"embedded ({home / 'lm' / 'metadata.db'})"
    report.tls = _tls_line(home, state, config)
    lm = LogicModuleClient(address, tls=config.tls)
    try:
        report.lm_version = lm.health(timeout=timeout)
        report.lm_alive = True
        if not (config.user and config.password):
            report.problem = "no credentials (DATACLAY_USER / DATACLAY_PASSWORD or client.properties) to ask more"
            return report
        lm.token = lm.new_session(config.user, config.password, "").token
        stats = lm.get_stats()
        report.objects, report.aliases, report.sessions = stats.objects, stats.aliases, stats.open_sessions
        report.collected = stats.objects_collected
        for backend in lm.get_backends():
            report.backends.append(_describe(backend, lm.token, config.tls, timeout))
        lm.close_session()
    except DataClayException as e:
        report.problem = str(e)
    finally:
        lm.close()
    return report


def _tls_line(home: pathlib.Path, state: ClusterState | None, config: Config) -> str:
    """Whether the cluster (the local one, when this home has one) uses TLS, and which CA this client trusts."""
    on = state.tls if state is not None else config.tls is not None
    if not on:
        return "off (plaintext)" + (f"; this client still trusts {config.tls}" if config.tls is not None else "")
    ca = f"clients trust {config.tls}" if config.tls is not None else "this client has no DATACLAY_TLS_CA"
    where = f", certificates in {home / 'tls'}" if state is not None else ""
    return f"on for every connection ({ca}{where})"


def _describe(backend, token: str, tls, timeout: float) -> BackendLine:
    line = BackendLine(name=backend.name, backend_id=backend.id, address=f"{backend.host}:{backend.port}",
                       alive=backend.alive, engine=backend.store_engine or "?")
    if not backend.alive:
        return line
    ds = DataServiceClient(line.address, token, tls=tls)
    try:
        status = ds.get_status(timeout=timeout)
        store = status.store
        line.engine, line.durability = store.engine, store.durability
        line.objects, line.used, line.capacity = store.objects, store.used_bytes, store.capacity_bytes
        line.collected = store.objects_collected
        line.encrypted = store.encrypted
        for env in status.environments:
            line.environments.append(environment_line(env))
    except DataClayException as e:
        line.problem = str(e)
    finally:
        ds.close()
    return line


def environment_line(env) -> str:
    """One line about an execution environment: how model code is confined, and its processes (one per account)."""
    language = _language_name(env.language)
    if env.confinement == "in-process":
        return f"{language} in the Data Service's process (pid {env.pid}, {env.calls} calls; not confined)"
    state = "up" if env.alive else f"DOWN: {env.problem or 'no process could start'}"
    processes = ", ".join(f"{p.account} (pid {p.pid}, {p.calls} calls, {p.restarts} restarts"
                          f"{', ' + str(p.calls_in_flight) + ' running' if p.calls_in_flight else ''})"
                          for p in env.processes)
    listed = f": {processes}" if processes else " (each starts at its account's first call)"
    applied = next((p.confinement for p in env.processes if p.confinement), "")
    layers = ",".join(layer for layer in applied.split(",") if not layer.startswith("uid="))
    confinement = env.confinement + (f" ({layers})" if layers else "")
    return (f"{language} {state}, confinement {confinement}, {len(env.processes)} process(es){listed}, "
            f"{env.restarts} restarts, {env.calls} calls")


def _language_name(value: int) -> str:
    from dataclay._internal.proto import common_pb2
    return common_pb2.Language.Name(value).lower()


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def format_status(report: StatusReport) -> str:
    """The report as the text `dataclay status` prints."""
    if not report.lm_alive:
        return (f"Logic Module {report.lm_address}: DOWN ({report.problem or 'no answer'})\n"
                f"  TLS: {report.tls}")
    out = [f"Logic Module {report.lm_address}: up, version {report.lm_version}", f"  TLS: {report.tls}"]
    if report.metadata:
        out.append(f"  metadata: {report.metadata}")
    out.append(f"  objects {report.objects}, aliases {report.aliases}, open sessions {report.sessions}, "
               f"objects collected {report.collected}")
    if report.problem:
        out.append(f"  {report.problem}")
    out.append(f"Backends: {len(report.backends)}")
    for b in report.backends:
        pool = f"{_size(b.used)} of {_size(b.capacity)}" if b.capacity else (_size(b.used) if b.used else "-")
        objects = "-" if b.objects is None else str(b.objects)
        out.append(f"  {b.name}  {b.address}  {'alive' if b.alive else 'DOWN'}  id {b.backend_id}")
        if b.alive:
            out.append(f"    store {b.engine}: {objects} objects, {b.collected} collected, pool {pool}, "
                       f"{'encrypted at rest' if b.encrypted else 'not encrypted'}")
            if b.durability:
                out.append(f"    durability: {b.durability}")
            for env in b.environments:
                out.append(f"    execution environment {env}")
        if b.problem:
            out.append(f"    {b.problem}")
    return "\n".join(out)


def health(report: StatusReport) -> str:
    """"up" (the Logic Module and every backend answer), "degraded" (a backend is down or does not answer)
    or "down" (the Logic Module does not answer)."""
    if not report.lm_alive:
        return "down"
    return "degraded" if any(not b.alive or b.problem for b in report.backends) else "up"


def exit_code(report: StatusReport) -> int:
    """What `dataclay status` exits with: 0 up, 1 the Logic Module down, 3 a backend down."""
    return {"up": EXIT_UP, "down": EXIT_LM_DOWN, "degraded": EXIT_BACKEND_DOWN}[health(report)]


def status_json(report: StatusReport) -> str:
    """The report as one JSON document (`dataclay status --json`): "health" first, then every field of
    StatusReport and BackendLine under its own name (objects: null when a backend could not say)."""
    return json.dumps({"health": health(report), **asdict(report)}, indent=2)
