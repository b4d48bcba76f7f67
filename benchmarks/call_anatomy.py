#!/usr/bin/env python
"""Where a call's time and CPU go: the same counter read and updated along paths that differ by one
part each, taking turns in one run, with each process's CPU per call.

Rows (one client process, `kv` engine, one backend):
- floor: LogicModule.Health, a gRPC round trip to a Java server (2 thread wake-ups: the server's
  network thread and the client); the Logic Module does some work for it (see its CPU column), so
  it bounds the floor from above;
- field (store): `counter.value`, answered by the Data Service from its store (2 wake-ups);
- get (store): `counter.get()`, a method whose body returns the field: also from the store;
- get (environment): `counter.get_computed()`, the same value computed in the account's execution
  environment (5 wake-ups: network thread, environment, the link's reader thread, network thread
  again, client);
- update: `counter.increment()`, durable at return (the environment's delta written to the pool).

The differences between rows attribute the time: get (environment) - get (store) is the environment
hop; update - get (environment) is the durable write. CPU per call comes from /proc/<pid>/stat of the client, the Data
Service, its environments and the Logic Module over each row's calls. `--gc-log` also reads the Data
Service's GC pauses (its JVM started with -Xlog:gc) and counts the client's Python collections.
`--threads` splits each row's Data Service CPU by thread kind (_cpu_time.JVM_THREAD_KINDS): the
network threads (gRPC and Netty, and the calls served inline on them), the pool, the environment
link's result reader, GC and JIT."""
from __future__ import annotations

import argparse
import gc
import os
import pathlib
import re
import tempfile
import time

from _cluster import connected_cluster, p50_p99
from _cpu_time import JVM_KINDS, cpu_by_thread_kind, descendants, snapshot, thread_cpu

class Collections:
    """Time this process spends in Python's garbage collector."""

    def __init__(self):
        self.seconds = 0.0
        self.count = 0
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase, info):
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started
            self.count += 1


def gc_pauses(log: pathlib.Path) -> list[tuple[float, float]]:
    """(JVM uptime s, pause ms) of each pause in a -Xlog:gc file (decorations uptime)."""
    pauses = []
    for line in log.read_text(errors="replace").splitlines():
        m = re.search(r"\[(\d+\.\d+)s\].*Pause.* (\d+\.\d+)ms$", line)
        if m:
            pauses.append((float(m.group(1)), float(m.group(2))))
    return pauses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=20000, help="measured calls per row")
    parser.add_argument("--warmup", type=int, default=20000, help="unmeasured calls per row first")
    parser.add_argument("--rounds", type=int, default=10, help="turns each row takes")
    parser.add_argument("--gc-log", action="store_true", help="log the Data Service's GC pauses and count them")
    parser.add_argument("--threads", action="store_true", help="split the Data Service's CPU by thread kind")
    args = parser.parse_args()

    log_dir = pathlib.Path(tempfile.mkdtemp(prefix="anatomy-"))
    gc_log = log_dir / "ds-gc.log"
    java_opts = " ".join(filter(None, [os.environ.get("DATACLAY_JAVA_OPTS"),
                                       f"-Xlog:gc:file={gc_log}:uptime" if args.gc_log else None])) or None
    with connected_cluster(backends=1, store="kv", store_size="1G", java_opts=java_opts) as cluster:
        from dataclay._internal.rpc import LogicModuleClient
        from people.model import Counter

        lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
        counter = Counter(0)
        counter.make_persistent()
        rows = {
            "floor": lm.health,
            "field (store)": lambda: counter.value,
            "get (store)": counter.get,
            "get (environment)": counter.get_computed,
            "update": counter.increment,
        }
        for fn in rows.values():
            for _ in range(args.warmup):
                fn()
        pids = cluster.pids()
        processes = {"client": [os.getpid()], "data service": [pids["backend-1"]],
                     "environment": descendants(pids["backend-1"]), "logic module": [pids["logicmodule"]]}
        samples = {row: [] for row in rows}
        cpu = {row: dict.fromkeys(processes, 0.0) for row in rows}
        ds_threads = {row: dict.fromkeys(JVM_KINDS, 0.0) for row in rows}
        collections = Collections()
        per_round = max(1, args.n // args.rounds)
        started = time.monotonic()
        for _ in range(args.rounds):
            for row, fn in rows.items():
                before = snapshot(processes)
                threads_before = thread_cpu(pids["backend-1"]) if args.threads else None
                for _ in range(per_round):
                    t = time.perf_counter()
                    fn()
                    samples[row].append(time.perf_counter() - t)
                after = snapshot(processes)
                for p in processes:
                    cpu[row][p] += after[p] - before[p]
                if args.threads:
                    split = cpu_by_thread_kind(threads_before, thread_cpu(pids["backend-1"]))
                    for kind in JVM_KINDS:
                        ds_threads[row][kind] += split[kind]
        elapsed = time.monotonic() - started
        calls = per_round * args.rounds

    print(f"one client, kv, n = {calls} per row after {args.warmup} unmeasured, {args.rounds} rounds, "
          f"{elapsed:.1f} s measured")
    print(f"{'row':<18} {'p50 us':>7} {'p99 us':>7}   CPU us per call: " + "  ".join(f"{p:>12}" for p in processes)
          + f"  {'sum':>6}")
    p50s = {}
    for row in rows:
        p50, p99 = p50_p99(samples[row])
        p50s[row] = p50
        per_call = {p: cpu[row][p] / calls * 1e6 for p in processes}
        print(f"{row:<18} {p50 * 1e6:7.0f} {p99 * 1e6:7.0f}   {'':16}" + "  ".join(f"{v:12.0f}" for v in per_call.values())
              + f"  {sum(per_call.values()):6.0f}")
    if args.threads:
        print("Data Service CPU us per call by thread kind: " + "  ".join(f"{k:>16}" for k in JVM_KINDS))
        for row in rows:
            print(f"  {row:<18}{'':26}" + "  ".join(f"{ds_threads[row][k] / calls * 1e6:16.0f}" for k in JVM_KINDS))
    print("attributed (p50 differences):")
    print(f"  the environment hop          get (environment) - get (store) {(p50s['get (environment)'] - p50s['get (store)']) * 1e6:6.0f} us")
    print(f"  the durable write            update - get (environment)      {(p50s['update'] - p50s['get (environment)']) * 1e6:6.0f} us")
    print(f"client Python GC: {collections.count} collections, {collections.seconds * 1e3:.1f} ms in all")
    if args.gc_log and gc_log.exists():
        pauses = gc_pauses(gc_log)
        print(f"Data Service GC: {len(pauses)} pauses since its start, {sum(p for _, p in pauses):.1f} ms in all, "
              f"longest {max((p for _, p in pauses), default=0):.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
