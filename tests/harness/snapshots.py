"""Helpers of the export/import tests: what a cluster holds (to show a failed import changed
nothing), client programs run against a cluster, and writers that keep invariants across objects
on different backends while a snapshot is taken."""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import textwrap
import time

from dataclay._internal.config import Config
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient

PRELUDE = textwrap.dedent("""
    import json, sys
    from dataclay import api
    api.init()
    from people.model import Person, Account, Counter
    from payloads.model import Blob
""")

# Each writer owns a pair of counters on two backends and increments a, then b, one call each: at
# every moment 0 <= a - b <= 1. Another moves 1 between two accounts on two backends, withdraw then
# deposit: at every moment the total is 2000 or 1999. A snapshot that is not one cut across the
# backends (one read earlier than the other) breaks these as soon as writers run between the reads.
PAIR_WRITER = PRELUDE + textwrap.dedent("""
    import pathlib
    a, b, stop = api.get_by_id(sys.argv[1]), api.get_by_id(sys.argv[2]), pathlib.Path(sys.argv[3])
    n = 0
    while not stop.exists():
        a.increment()
        b.increment()
        n += 1
    print(json.dumps({"a": a.get(), "b": b.get(), "rounds": n}))
""")

TRANSFER_WRITER = PRELUDE + textwrap.dedent("""
    import pathlib
    x, y, stop = api.get_by_id(sys.argv[1]), api.get_by_id(sys.argv[2]), pathlib.Path(sys.argv[3])
    n = 0
    while not stop.exists():
        source, target = (x, y) if n % 2 == 0 else (y, x)
        source.withdraw(1)
        target.deposit(1)
        n += 1
    print(json.dumps({"total": x.balance + y.balance, "rounds": n}))
""")


def client(cluster, body: str, *args: str, env: dict | None = None, check: bool = True):
    """Runs `body` after PRELUDE in a fresh client process; the JSON of its last line (or the result when not `check`)."""
    command = [sys.executable, "-c", PRELUDE + textwrap.dedent(body), *args]
    result = subprocess.run(command, env={**cluster.env, **(env or {})}, capture_output=True, text=True, timeout=180)
    if not check:
        return result
    assert result.returncode == 0, f"client failed:\n{result.stdout}\n{result.stderr}\n{cluster.logs()}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def holdings(cluster) -> dict:
    """What a failed import must leave as it was: registered objects and aliases, models, accounts'
    datasets, and how many objects each live backend stores."""
    config = Config.load(env=cluster.env)
    lm = LogicModuleClient(config.lm_address, tls=config.tls)
    try:
        lm.token = lm.new_session(config.user, config.password).token
        stats = lm.get_stats()
        out = {"objects": stats.objects, "aliases": stats.aliases,
               "models": sorted((m.namespace, m.version) for m in lm.list_models()), "stored": {}}
        for b in lm.get_backends():
            if b.alive:
                ds = DataServiceClient(f"{b.host}:{b.port}", lm.token, tls=config.tls)
                try:
                    out["stored"][b.name] = ds.get_status().store.objects
                finally:
                    ds.close()
        lm.close_session()
        return out
    finally:
        lm.close()


class StoreCounter:
    """Asks one backend, over and over, how many objects it stores (an administrator's open session)."""

    def __init__(self, cluster, backend_name: str):
        config = Config.load(env=cluster.env)
        self._lm = LogicModuleClient(config.lm_address, tls=config.tls)
        self._lm.token = self._lm.new_session(config.user, config.password).token
        b = next(b for b in self._lm.get_backends() if b.name == backend_name)
        self._ds = DataServiceClient(f"{b.host}:{b.port}", self._lm.token, tls=config.tls)

    def objects(self) -> int:
        return self._ds.get_status().store.objects

    def close(self) -> None:
        self._ds.close()
        self._lm.close()


def wait_until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def wait_for_backends(cluster, count: int, timeout: float = 60) -> None:
    """Waits until `count` backends are alive."""
    wait_until(lambda: len(holdings(cluster)["stored"]) >= count, timeout, f"{count} live backends")


def manifest(directory: pathlib.Path) -> dict:
    return json.loads((directory / "manifest.json").read_text())
