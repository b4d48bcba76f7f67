"""Concurrency runs: N client processes, each on a counter of its own, call one operation for a
fixed time after a warm-up; the CPU time of every server process involved is read from /proc
around the measured window."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from dataclasses import dataclass

from _cpu_time import snapshot

HERE = pathlib.Path(__file__).resolve().parent


@dataclass
class LoadResult:
    """What one concurrency run measured: calls/s over all clients, per-call percentiles (s), and
    CPU µs per call by process kind ("clients" summed over the client processes)."""
    calls_per_second: float
    p50: float
    p99: float
    cpu_us_per_call: dict[str, float]


def client_env(base: dict) -> dict:
    """`base` with this folder and benchmarks/ first on PYTHONPATH."""
    env = dict(base)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), str(HERE.parent), env.get("PYTHONPATH")]))
    return env


def run_load(system: str, address: str, env: dict, servers, clients: int, op: str, warmup: int,
             seconds: float) -> LoadResult:
    """`clients` processes of load_client.py against `system`; `servers()` gives kind -> pids
    once they are warm (an execution environment may start only at the first call)."""
    processes = [subprocess.Popen([sys.executable, str(HERE / "load_client.py"), system, address, f"load-{i}", op,
                                   str(warmup), str(seconds)], env=client_env(env), text=True,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                 for i in range(clients)]
    try:
        for process in processes:
            if process.stdout.readline().strip() != "ready":
                raise RuntimeError(f"a {system} load client failed during warm-up")
        kinds = servers()
        before = snapshot(kinds)
        for process in processes:
            process.stdin.write("go\n")
            process.stdin.flush()
        reports = [json.loads(process.stdout.readline()) for process in processes]
        after = snapshot(kinds)
    finally:
        for process in processes:
            process.kill()
            process.wait()
    return summarise(reports, {kind: after[kind] - before[kind] for kind in kinds})


def summarise(reports: list[dict], server_cpu: dict[str, float]) -> LoadResult:
    """One LoadResult from the clients' reports and the servers' CPU seconds over the window."""
    samples = sorted(s for report in reports for s in report["samples"])
    calls = len(samples)
    cpu = {kind: seconds * 1e6 / calls for kind, seconds in server_cpu.items()}
    cpu["clients"] = sum(report["cpu"] for report in reports) * 1e6 / calls
    return LoadResult(calls_per_second=sum(len(r["samples"]) / r["elapsed"] for r in reports),
                      p50=samples[calls // 2] / 1e6, p99=samples[min(calls - 1, int(calls * 0.99))] / 1e6,
                      cpu_us_per_call=cpu)
