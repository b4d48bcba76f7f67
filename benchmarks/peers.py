#!/usr/bin/env python
"""pmclay against what a Python programmer would script instead: Redis with pickle.

One client process makes the same logical operations on each system:
- update: durably increment a stored counter and get the new value back. pmclay: an active
  method, `Counter.increment()`, run in the backend (`kv` engine, durable when it returns).
  Redis: GET, unpickle, add one, pickle, SET, with the append-only file fsynced at every write
  (`appendfsync always`), the promise closest to pmclay's.
- read: get the counter's value. pmclay: an active method, `Counter.get()`. Redis: GET and unpickle.

Both keep their data on /dev/shm, both servers are started by this script and both are warmed
up first. The systems take turns in rounds, so a change in the machine's load falls on both.
Redis' update is not atomic between several clients (WATCH/MULTI would make it so, and slower):
this is the simple thing users script."""
from __future__ import annotations

import argparse
import contextlib
import pickle
import shutil
import socket
import subprocess
import tempfile
import time

from _cluster import connected_cluster, p50_p99


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def redis_server():
    """A redis-server with AOF `always` on /dev/shm, on a free port; a connected redis-py client."""
    import redis

    directory = tempfile.mkdtemp(prefix="peers-redis-", dir="/dev/shm")
    port = _free_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", directory,
                               "--appendonly", "yes", "--appendfsync", "always", "--save", ""],
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


def timed(fn, n: int) -> list[float]:
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=20000, help="measured operations per figure")
    parser.add_argument("--warmup", type=int, default=40000, help="unmeasured operations per system and operation first")
    parser.add_argument("--rounds", type=int, default=10, help="turns each system takes")
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

        print(f"one client, n = {per_round * args.rounds} per figure after {args.warmup} unmeasured, "
              f"{args.rounds} rounds")
        for op in operations:
            ours50, ours99 = p50_p99(samples[(op, "pmclay")])
            redis50, redis99 = p50_p99(samples[(op, "redis")])
            print(f"  {op:<7} pmclay p50 {ours50 * 1e6:6.0f} us  p99 {ours99 * 1e6:6.0f} us   "
                  f"redis+pickle p50 {redis50 * 1e6:6.0f} us  p99 {redis99 * 1e6:6.0f} us   "
                  f"pmclay/redis p50 x{ours50 / redis50:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
