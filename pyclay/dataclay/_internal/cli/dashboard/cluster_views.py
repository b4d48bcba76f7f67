"""The documents of the dashboard's JSON API, read from the cluster over gRPC in the caller's own
session, so every answer is limited by what that account may see (the Logic Module checks it).

Each function returns plain JSON-ready data. `dataclay locate` prints the same document as
/api/v1/locate, and `dataclay status --json` carries the fields of /api/v1/overview's backends."""
from __future__ import annotations

import re
import threading

from dataclay.exceptions import (BackendDoesNotExistError, DataClayException, DoesNotExistError,
                                 InvalidArgumentError, ObjectDoesNotExistError)
from dataclay._internal.cli.dashboard.call_history import UNCHARTED, histogram_of
from dataclay._internal.cli.local.status_report import environment_line
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient
from dataclay._internal.rpc.convert import language_name

OBJECT_ID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
MAX_QUERY = 256          # longest alias or ID the search takes
MAX_MATCHES = 20         # objects one search shows (an alias may exist in many datasets)
MAX_VERSIONS = 100       # versions listed per object
PAGE = 500


class Cluster:
    """The cluster the dashboard shows: one channel to the Logic Module and one per backend, shared by
    every browser session; each call runs in the session token it is given."""

    def __init__(self, lm_address: str, tls, timeout: float):
        self.lm_address = lm_address
        self.tls = tls
        self.timeout = timeout
        self._lm = LogicModuleClient(lm_address, tls=tls)
        self._backends: dict[str, DataServiceClient] = {}
        self._lock = threading.Lock()

    def lm(self, token: str | None) -> LogicModuleClient:
        """The Logic Module, acting in session `token`."""
        return self._lm.with_token(token)

    def backend(self, address: str, token: str) -> DataServiceClient:
        """The backend at `address`, acting in session `token`."""
        with self._lock:
            client = self._backends.get(address)
            if client is None:
                client = self._backends[address] = DataServiceClient(address, tls=self.tls)
        return client.with_token(token)

    def close(self) -> None:
        """Closes every channel."""
        with self._lock:
            for client in self._backends.values():
                client.close()
            self._backends.clear()
        self._lm.close()


def overview(cluster: Cluster, token: str) -> dict:
    """The Logic Module's totals and every backend with its liveness, engine, durability, pool use,
    object count and execution environments (a backend that does not answer says why)."""
    lm = cluster.lm(token)
    stats = lm.get_stats()
    backends = [_backend_summary(cluster, token, b) for b in lm.get_backends(timeout=cluster.timeout)]
    return {"logic_module": {"address": cluster.lm_address, "version": lm.health(timeout=cluster.timeout),
                             "objects": stats.objects, "aliases": stats.aliases, "sessions": stats.open_sessions,
                             "collected": stats.objects_collected, "tls": cluster.tls is not None},
            "backends": backends}


def _backend_info(b) -> dict:
    return {"id": b.id, "name": b.name, "address": f"{b.host}:{b.port}", "alive": b.alive,
            "engine": b.store_engine or "?", "languages": [language_name(lang) for lang in b.languages]}


def _backend_summary(cluster: Cluster, token: str, b, status=None) -> dict:
    out = {**_backend_info(b), "durability": "", "objects": None, "used_bytes": 0, "capacity_bytes": 0,
           "collected": 0, "encrypted": False, "environments": [], "problem": ""}
    if not b.alive:
        out["problem"] = "no heartbeat: the Logic Module counts it as down"
        return out
    try:
        status = status or cluster.backend(out["address"], token).get_status(timeout=cluster.timeout)
    except DataClayException as e:
        out["problem"] = str(e)
        return out
    store = status.store
    out.update(engine=store.engine, durability=store.durability, objects=store.objects,
               used_bytes=store.used_bytes, capacity_bytes=store.capacity_bytes,
               collected=store.objects_collected, encrypted=store.encrypted,
               environments=[environment_line(env) for env in status.environments])
    return out


def backend_page(cluster: Cluster, token: str, backend_id: str) -> dict:
    """One backend: its summary, its execution environments' processes, and per RPC the calls started
    and the ended calls' count, mean, p50 and p99 since it started."""
    match = [b for b in cluster.lm(token).get_backends(timeout=cluster.timeout) if b.id == backend_id]
    if not match:
        raise BackendDoesNotExistError(f"no backend has ID {backend_id!r}; the overview lists every backend")
    b = match[0]
    out = _backend_summary(cluster, token, b)
    out["rpcs"], out["processes"] = [], []
    if not b.alive or out["problem"]:
        return out
    try:
        status = cluster.backend(out["address"], token).get_status(timeout=cluster.timeout)
    except DataClayException as e:
        out["problem"] = str(e)
        return out
    out["rpcs"] = rpc_table(status.calls, status.latency)
    for env in status.environments:
        for p in env.processes:
            out["processes"].append({"language": language_name(env.language), "account": p.account, "pid": p.pid,
                                     "alive": p.alive, "calls": p.calls, "in_flight": p.calls_in_flight,
                                     "restarts": p.restarts, "confinement": p.confinement})
    return out


def rpc_table(calls, latency) -> list:
    """Per RPC: calls started, and the ended ones' count, mean, p50 and p99 in milliseconds, by name."""
    rows = []
    for rpc in sorted(set(calls) | set(latency)):
        figures = latency.get(rpc)
        histogram = histogram_of(figures) if figures is not None else None
        ended = figures.count if figures is not None else 0
        rows.append({"rpc": rpc, "started": calls.get(rpc, 0), "ended": ended,
                     "mean_ms": round(figures.sum_seconds * 1000 / ended, 3) if ended else None,
                     "p50_ms": _ms(histogram.quantile(0.5)) if histogram else None,
                     "p99_ms": _ms(histogram.quantile(0.99)) if histogram else None,
                     "charted": rpc not in UNCHARTED})
    return rows


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000.0, 3)


def models(cluster: Cluster, token: str) -> list:
    """Every registered model the account may read: namespace, language, owner, classes, version and state."""
    out = []
    for m in cluster.lm(token).list_models():
        state = "withdrawn" if m.withdrawn else ("published" if m.published else "private")
        out.append({"namespace": m.namespace, "language": language_name(m.language), "owner": m.owner,
                    "classes": len(m.classes), "files": len(m.files), "version": m.version, "state": state})
    return sorted(out, key=lambda m: (m["namespace"], m["language"]))


def datasets(cluster: Cluster, token: str, limit: int = 10_000) -> dict:
    """The datasets the account may see with their owners and object counts (at most `limit`)."""
    lm, rows, page_token = cluster.lm(token), [], ""
    while True:
        page = lm.list_datasets(page_size=PAGE, page_token=page_token, count_objects=True, timeout=cluster.timeout)
        rows.extend({"name": d.name, "owner": d.owner, "access": d.access, "objects": d.objects}
                    for d in page.datasets)
        page_token = page.next_page_token
        if not page_token or len(rows) >= limit:
            return {"datasets": rows[:limit], "complete": not page_token and len(rows) <= limit}


def sessions(cluster: Cluster, token: str) -> dict:
    """Open user sessions, in all and per account."""
    stats = cluster.lm(token).get_stats()
    return {"open": stats.open_sessions,
            "by_account": [{"account": a, "sessions": n} for a, n in sorted(stats.sessions_by_account.items())]}


def events(cluster: Cluster, token: str) -> list:
    """The Logic Module's history since it started: garbage collections and failover, newest first."""
    stats = cluster.lm(token).get_stats()
    return [{"at_ms": e.at_ms, "kind": e.kind, "backend_id": e.backend_id, "objects": e.objects, "term": e.term,
             "detail": e.detail} for e in reversed(stats.events)]


def locate(cluster: Cluster, token: str, query: str) -> dict:
    """Where an object lives, found by its ID or by an alias in any dataset the account may see: for each
    match its class, dataset, aliases, master and replica backends (with liveness), what it is a
    version of, and its versions. Raises ObjectDoesNotExistError with a message saying what was searched."""
    query = (query or "").strip()
    if not query:
        raise InvalidArgumentError("type an alias or an object ID to search for")
    if len(query) > MAX_QUERY:
        raise InvalidArgumentError(f"an alias or object ID is at most {MAX_QUERY} characters, not {len(query)}")
    lm = cluster.lm(token)
    if OBJECT_ID.match(query):
        try:
            found = [lm.get_object_info(query.lower(), timeout=cluster.timeout)]
        except DoesNotExistError:
            raise ObjectDoesNotExistError(f"no object has ID {query} in any dataset you can read") from None
    else:
        found = [lm.get_object_info(a.object_id, timeout=cluster.timeout) for a in _aliases_named(lm, query, cluster)]
        if not found:
            raise ObjectDoesNotExistError(f"no object has the alias {query!r} in any dataset you can read "
                                      f"(aliases are case-sensitive; an object ID looks like "
                                      f"123e4567-e89b-12d3-a456-426614174000)")
    backends = {b.id: b for b in lm.get_backends(timeout=cluster.timeout)}
    return {"query": query, "objects": [_placed(lm, cluster, info, backends) for info in found]}


def _aliases_named(lm: LogicModuleClient, alias: str, cluster: Cluster) -> list:
    """The aliases exactly `alias` in every dataset the session may see. The listing's pattern has no
    escape for its wildcards, so '*' and '?' in an alias match more and the surplus is dropped."""
    out, page_token = [], ""
    while len(out) < MAX_MATCHES:
        page = lm.list_aliases(pattern=alias, page_size=PAGE, page_token=page_token, timeout=cluster.timeout)
        out.extend(a for a in page.aliases if a.alias == alias)
        page_token = page.next_page_token
        if not page_token:
            break
    return out[:MAX_MATCHES]


def _placed(lm: LogicModuleClient, cluster: Cluster, info, backends: dict) -> dict:
    versions = lm.list_objects(version_of=info.id, page_size=MAX_VERSIONS, timeout=cluster.timeout)
    return {"id": info.id, "class_name": info.class_name, "language": info.language, "dataset": info.dataset,
            "aliases": list(info.aliases), "master": _where(info.master_backend_id, backends),
            "replicas": [_where(r, backends) for r in info.replica_backend_ids],
            "version_of": info.version_of or None,
            "versions": [{"id": v.id, "master": _where(v.master_backend_id, backends)} for v in versions.objects],
            "more_versions": bool(versions.next_page_token)}


def _where(backend_id: str, backends: dict) -> dict:
    b = backends.get(backend_id)
    if b is None:
        return {"id": backend_id, "name": "(unregistered)", "address": "", "alive": False}
    return {"id": b.id, "name": b.name, "address": f"{b.host}:{b.port}", "alive": b.alive}
