#!/usr/bin/env python
"""pmclay against what a Python programmer would pick instead: Redis with pickle, ZODB (FileStorage
in-process, and ZEO), and dataClay 4.3.1.

Each system makes the same logical operations on a stored counter:
- update: durably increment it and get the new value back. pmclay: the active method
  `Counter.increment()`, run in the backend (`kv` engine, durable when it returns). Redis: GET,
  unpickle, +1, pickle, SET, with the append-only file fsynced at every write (`appendfsync
  always`). ZODB and ZEO: load, +1, `transaction.commit()` (FileStorage fsyncs at commit).
- read: get its value. pmclay: the active method `Counter.get()`. Redis: GET and unpickle.
  ZODB/ZEO: the attribute in a new transaction, served from the connection's object cache
  (no I/O, no round trip) unless another client's commit invalidated it.
- field: `counter.value` on pmclay (a GetField to the Data Service) and dataClay 4; the others'
  read again (they have no remote field read).
- dataClay 4.3.1 from PyPI (`--dataclay4`): the same active methods and field read, on its
  metadata service and one backend started as processes, with a Redis for its metadata. It keeps
  objects in memory and pickles them on flush or shutdown: nothing is durable at return. It runs
  in a virtualenv of its own (benchmarks/.venv-dataclay4), in a phase of its own after the others.

Every store is on /dev/shm. One client process first (the systems take turns in rounds, so a
change in the machine's load falls on all); `--just-started` also times each system's first calls
after it starts; `--clients 1,2,4,8,16` then runs that many client processes per system, each on a
counter of its own, and reports calls/s, percentiles and CPU per call of every process kind.
ZODB FileStorage is in-process and single-client: it takes no part in the concurrency runs.

With DATACLAY_CPUS set (e.g. `DATACLAY_CPUS=0`), pmclay's backend runs on those CPUs, and so do the
Redis and ZEO servers, so that each server side is placed alike; clients are placed by the OS."""
from __future__ import annotations

import argparse
import contextlib
import os
import pathlib
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

from _cluster import connected_cluster
from _timing import timed
from dataclay._internal import settings_table
from dataclay._internal.cli.common import placement

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "peers"))

import dataclay4_peer  # noqa: E402
import pmclay_peer  # noqa: E402
import redis_peer  # noqa: E402
import report  # noqa: E402
import zodb_peer  # noqa: E402
from load import run_load  # noqa: E402

OPERATIONS = ("update", "read", "field")


@dataclass
class System:
    """A started system as the benchmark drives it: what each operation promises, its operations
    in this process, how a load client reaches it (None: no other process can), its server
    processes by kind, and what its start measured."""
    name: str
    promises: dict[str, str]
    operations: dict[str, Callable]
    address: str | None = None
    env: dict | None = None
    servers: Callable[[], dict[str, list[int]]] = dict
    startup_seconds: float = 0.0
    first_calls: dict[str, list[float]] = field(default_factory=dict)


def start_pmclay(stack: contextlib.ExitStack) -> System:
    cluster = stack.enter_context(connected_cluster(backends=1, store="kv", store_size="1G"))
    return System("pmclay", pmclay_peer.PROMISES, pmclay_peer.pmclay_operations(), "-", cluster.env,
                  lambda: pmclay_peer.pmclay_servers(cluster))


def peer_cpus():
    """The CPUs DATACLAY_CPUS gives pmclay's backend, where the peers' servers run too (None: any)."""
    return placement.cpus_for(settings_table.value("DATACLAY_CPUS", os.environ), 0)


def start_redis(stack: contextlib.ExitStack) -> System:
    with placement.placed(peer_cpus()):
        port, server = stack.enter_context(redis_peer.redis_server())
    return System("redis", redis_peer.PROMISES, redis_peer.redis_operations(port, "counter"), str(port),
                  servers=lambda: {"redis-server": [server.pid]})


def start_zodb(stack: contextlib.ExitStack) -> System:
    connection = stack.enter_context(zodb_peer.file_storage())
    return System("zodb", zodb_peer.FILESTORAGE_PROMISES, zodb_peer.counter_operations(connection, "counter"))


def start_zeo(stack: contextlib.ExitStack) -> System:
    with placement.placed(peer_cpus()):
        port, server = stack.enter_context(zodb_peer.zeo_server())
    connection = zodb_peer.zeo_connection(port)
    stack.callback(connection.db().close)
    return System("zeo", zodb_peer.ZEO_PROMISES, zodb_peer.counter_operations(connection, "counter"), str(port),
                  servers=lambda: {"runzeo": [server.pid]})


PEERS = {"redis": start_redis, "zodb": start_zodb, "zeo": start_zeo}


def started(starter, stack: contextlib.ExitStack, just_started: int) -> System:
    """The system `starter` starts, timed from its start to its first update answered; with
    `just_started`, the next that many calls of each operation are timed before any warm-up."""
    began = time.perf_counter()
    system = starter(stack)
    system.operations["update"]()
    system.startup_seconds = time.perf_counter() - began
    system.first_calls = {op: timed(fn, just_started) for op, fn in system.operations.items()} if just_started else {}
    return system


def warm_samples(systems: list[System], n: int, warmup: int, rounds: int) -> dict[tuple[str, str], list[float]]:
    """(operation, system) -> seconds per call: `warmup` unmeasured calls each, then `rounds`
    turns of n / rounds calls, the systems taking turns."""
    for system in systems:
        for fn in system.operations.values():
            timed(fn, warmup)
    samples = {(op, s.name): [] for s in systems for op in OPERATIONS}
    for _ in range(rounds):
        for op in OPERATIONS:
            for system in systems:
                samples[(op, system.name)] += timed(system.operations[op], n // rounds)
    return samples


def load_runs(systems: list[System], args) -> list[tuple[str, int, object]]:
    """(system, clients, LoadResult) for every system a load client can reach and client count."""
    results = []
    for clients in args.clients:
        for system in systems:
            if system.address is not None:
                results.append((system.name, clients, run_load(system.name, system.address, system.env or {},
                                                               system.servers, clients, args.load_op,
                                                               args.load_warmup, args.seconds)))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=20000, help="measured operations per figure")
    parser.add_argument("--warmup", type=int, default=40000, help="unmeasured operations per system and operation first")
    parser.add_argument("--rounds", type=int, default=10, help="turns each system takes")
    parser.add_argument("--peers", type=lambda s: s.split(","), default=list(PEERS),
                        help="which of redis,zodb,zeo run beside pmclay (all by default)")
    parser.add_argument("--dataclay4", action="store_true", help="also dataClay 4.3.1 from PyPI, in its own venv")
    parser.add_argument("--dataclay4-warmup", type=int, default=None,
                        help="unmeasured operations for dataClay 4 (default: --warmup); it has no JIT to warm")
    parser.add_argument("--just-started", type=int, default=0, metavar="N",
                        help="also time the first N calls of each operation after each system starts")
    parser.add_argument("--clients", type=lambda s: [int(c) for c in s.split(",")], default=[],
                        help="concurrency runs with these numbers of client processes, e.g. 1,2,4,8,16")
    parser.add_argument("--seconds", type=float, default=10, help="measured time of each concurrency run")
    parser.add_argument("--load-warmup", type=int, default=2000, help="unmeasured calls per load client first")
    parser.add_argument("--load-op", choices=OPERATIONS, default="update", help="what the load clients call")
    args = parser.parse_args()

    with contextlib.ExitStack() as stack:
        systems = [started(starter, stack, args.just_started)
                   for starter in (start_pmclay, *(PEERS[peer] for peer in args.peers))]
        samples = warm_samples(systems, args.n, args.warmup, args.rounds)
        loads = load_runs(systems, args)
    promises = {s.name: s.promises for s in systems}
    first = {s.name: (s.startup_seconds, s.first_calls) for s in systems}
    if args.dataclay4:
        warmup = args.warmup if args.dataclay4_warmup is None else args.dataclay4_warmup
        d4 = dataclay4_peer.dataclay4_samples(args.n, warmup, args.rounds, args.just_started)
        samples.update({(op, "dataclay4"): d4[op] for op in OPERATIONS})
        promises["dataclay4"] = dataclay4_peer.PROMISES
        first["dataclay4"] = (d4["startup"], d4["first"] if args.just_started else {})

    d4_warmup = f" (dataClay 4: {warmup})" if args.dataclay4 else ""
    print(f"one client, n = {args.n // args.rounds * args.rounds} per figure after {args.warmup} unmeasured"
          f"{d4_warmup}, {args.rounds} rounds")
    report.print_warm(samples, promises)
    report.print_targets(samples)
    report.print_just_started(first, samples)
    report.print_loads(loads, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
