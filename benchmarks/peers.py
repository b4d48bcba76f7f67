#!/usr/bin/env python
"""pmclay against what a Python programmer would pick instead: Redis with pickle, and dataClay 4.3.1.

One client process makes the same logical operations on each system:
- update: durably increment a stored counter and get the new value back. pmclay: an active
  method, `Counter.increment()`, run in the backend (`kv` engine, durable when it returns).
  Redis: GET, unpickle, add one, pickle, SET, with the append-only file fsynced at every write
  (`appendfsync always`), the promise closest to pmclay's.
- read: get the counter's value. pmclay: an active method, `Counter.get()`. Redis: GET and unpickle.
- dataClay 4.3.1 from PyPI (`--dataclay4`): the same two active methods, on its metadata service
  and one backend started as processes, with a Redis for its metadata. It keeps objects in the
  backend's memory and pickles them to disk on flush or shutdown: nothing is durable at return.
  Its package is also named `dataclay`, so it runs in a virtualenv of its own (made on first use
  in benchmarks/.venv-dataclay4), and in a phase of its own after the other two.

Both keep their data on /dev/shm, both servers are started by this script and both are warmed
up first. The systems take turns in rounds, so a change in the machine's load falls on both.
Redis' update is not atomic between several clients (WATCH/MULTI would make it so, and slower):
this is the simple thing users script."""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import pickle
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from _cluster import connected_cluster, p50_p99
from _timing import timed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def redis_server(durable: bool = True):
    """A redis-server on /dev/shm on a free port (`durable`: AOF with `appendfsync always`, else
    nothing on disk); a connected redis-py client."""
    import redis

    directory = tempfile.mkdtemp(prefix="peers-redis-", dir="/dev/shm")
    port = _free_port()
    persistence = ["--appendonly", "yes", "--appendfsync", "always"] if durable else ["--appendonly", "no"]
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", directory,
                               *persistence, "--save", ""],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = redis.Redis(port=port)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("redis-server did not start (is it installed? scripts/install-deps.sh)")
                time.sleep(0.05)
        yield client
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(directory, ignore_errors=True)


HERE = pathlib.Path(__file__).resolve().parent
DATACLAY4_VENV = HERE / ".venv-dataclay4"


def dataclay4_python() -> pathlib.Path:
    """dataClay 4.3.1's own interpreter, its virtualenv made on first use."""
    python = DATACLAY4_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(DATACLAY4_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "dataclay==4.3.1"], check=True)
    return python


def wait_for_port(port: int, process: subprocess.Popen, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start")
        time.sleep(0.1)


def dataclay4_samples(n: int, warmup: int, rounds: int) -> dict[str, list[float]]:
    """dataClay 4.3.1's metadata service and one backend, as processes; the client in its venv."""
    python = dataclay4_python()
    storage = tempfile.mkdtemp(prefix="peers-dataclay4-", dir="/dev/shm")
    metadata_port, backend_port = _free_port(), _free_port()
    with redis_server(durable=False) as kv:
        # dataClay 4 reads every DATACLAY_* variable as its own setting: pmclay's must not reach it
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DATACLAY_", "DC_"))}
        env.update({"DATACLAY_KV_HOST": "127.0.0.1", "DATACLAY_KV_PORT": str(kv.connection_pool.connection_kwargs["port"]),
               "DATACLAY_STORAGE_PATH": storage, "DATACLAY_LOGLEVEL": "WARNING",
               "DATACLAY_METADATA_HOST": "127.0.0.1", "DATACLAY_METADATA_PORT": str(metadata_port),
               "DATACLAY_BACKEND_HOST": "127.0.0.1", "DATACLAY_BACKEND_PORT": str(backend_port),
               "PYTHONPATH": os.pathsep.join([str(HERE / "peers"), str(HERE)])})
        servers = [subprocess.Popen([str(python), "-m", "dataclay.metadata"], env=env, cwd=storage,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        try:
            wait_for_port(metadata_port, servers[0], "dataClay 4's metadata service")
            servers.append(subprocess.Popen([str(python), "-m", "dataclay.backend"], env=env, cwd=storage,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            wait_for_port(backend_port, servers[1], "dataClay 4's backend")
            time.sleep(2)  # the backend registers itself with the metadata service after it listens
            worker = subprocess.run([str(python), str(HERE / "peers" / "dataclay4_client.py"), str(metadata_port),
                                     str(n), str(warmup), str(rounds)], env=env, capture_output=True, text=True,
                                    check=True)
            return json.loads(worker.stdout.strip().splitlines()[-1])
        finally:
            for server in servers:
                server.terminate()
            for server in servers:
                server.wait(timeout=30)
            shutil.rmtree(storage, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=20000, help="measured operations per figure")
    parser.add_argument("--warmup", type=int, default=40000, help="unmeasured operations per system and operation first")
    parser.add_argument("--rounds", type=int, default=10, help="turns each system takes")
    parser.add_argument("--dataclay4", action="store_true", help="also dataClay 4.3.1 from PyPI, in its own venv")
    args = parser.parse_args()

    with redis_server() as r, connected_cluster(backends=1, store="kv", store_size="1G"):
        from people.model import Counter

        counter = Counter(0)
        counter.make_persistent()
        r.set("counter", pickle.dumps(0))

        def redis_update():
            value = pickle.loads(r.get("counter")) + 1
            r.set("counter", pickle.dumps(value))
            return value

        def redis_read():
            return pickle.loads(r.get("counter"))

        operations = {
            "update": {"pmclay": counter.increment, "redis": redis_update},
            "read": {"pmclay": counter.get, "redis": redis_read},
        }
        for per_system in operations.values():
            for fn in per_system.values():
                timed(fn, args.warmup)
        samples = {(op, system): [] for op, per_system in operations.items() for system in per_system}
        per_round = max(1, args.n // args.rounds)
        for _ in range(args.rounds):
            for op, per_system in operations.items():
                for system, fn in per_system.items():
                    samples[(op, system)] += timed(fn, per_round)
        assert counter.get() == redis_read(), "the two counters disagree"
    if args.dataclay4:
        for op, values in dataclay4_samples(args.n, args.warmup, args.rounds).items():
            samples[(op, "dataclay4")] = values

    print(f"one client, n = {per_round * args.rounds} per figure after {args.warmup} unmeasured, "
          f"{args.rounds} rounds")
    for op in ("update", "read"):
        ours50, _ = p50_p99(samples[(op, "pmclay")])
        for system in ("pmclay", "redis", "dataclay4"):
            if (op, system) in samples:
                p50, p99 = p50_p99(samples[(op, system)])
                print(f"  {op:<7} {system:<10} p50 {p50 * 1e6:7.0f} us  p99 {p99 * 1e6:7.0f} us   "
                      f"pmclay p50 / this p50 x{ours50 / p50:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
