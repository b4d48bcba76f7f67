#!/usr/bin/env python
"""make_persistent now that every acknowledged object is registered before the answer (issue 21):
the latency of one client's make_persistent of one small object (p50/p99, beside the median of a
bare gRPC round trip from the same client to the Logic Module, Health), and the throughput of
several writer processes doing it at once (objects/s, with their per-call p50/p99, and how many
objects each RegisterObjects request carried), and of many a_make_persistent calls in flight at
once from one event loop.

With --baseline (another checkout, built, with its own .venv) both run at once, each on its own
local cluster (one `kv` backend on /dev/shm) driven by a process of its own checkout; the rounds
alternate between them (baseline, then this checkout, for each figure), so both see the same
machine, and each figure is also given as a ratio against the baseline of the same round. Every
cluster is warmed up first: its JVMs compile their paths during the first tens of thousands of calls."""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent

WRITER = """
import json, sys, time
from dataclay import api
api.init()
from people.model import Counter
start, seconds = float(sys.argv[1]), float(sys.argv[2])
for _ in range(200):
    Counter(1).make_persistent()
while time.time() < start:
    time.sleep(0.001)
samples = []
end = start + seconds
while time.time() < end:
    t = time.perf_counter()
    Counter(1).make_persistent()
    samples.append(time.perf_counter() - t)
print(json.dumps(samples))
"""

# Many calls in flight at once from one event loop: where group commit has calls to gather.
BURST = """
import asyncio, json, sys, time
from dataclay import api
api.init()
from people.model import Counter
async def main(n, batches):
    async def batch():
        await asyncio.gather(*(Counter(1).a_make_persistent() for _ in range(n)))
    for _ in range(3):
        await batch()
    t = time.perf_counter()
    for _ in range(batches):
        await batch()
    print(json.dumps(n * batches / (time.perf_counter() - t)))
asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
"""


def serve(warmup: int) -> None:
    """In the checkout whose Python runs this: a cluster, warmed up, measuring what stdin asks."""
    sys.path.insert(0, str(HERE))
    from _cluster import connected_cluster, p50_p99

    with connected_cluster(backends=1, store="kv", store_size="2G") as cluster:
        from dataclay import getRuntime
        from dataclay._internal.rpc import LogicModuleClient
        from people.model import Counter

        lm = LogicModuleClient(f"127.0.0.1:{cluster.port}", tls=getRuntime().config.tls)
        lm.token = lm.new_session(cluster.admin_user(), cluster.admin_password(), "").token

        def requests() -> int:
            return lm.get_stats().calls.get("RegisterObjects", 0)

        for _ in range(warmup):
            Counter(1).make_persistent()
        print(json.dumps({"ready": True}), flush=True)
        for line in sys.stdin:
            what, *numbers = line.split()
            load = os.getloadavg()[0]
            if what == "single":
                samples, health = [], []
                for _ in range(int(numbers[0])):
                    t = time.perf_counter()
                    Counter(1).make_persistent()
                    samples.append(time.perf_counter() - t)
                    t = time.perf_counter()
                    lm.health(timeout=5)
                    health.append(time.perf_counter() - t)
                print(json.dumps({"load": load, "p50_p99": p50_p99(samples), "lm_round_trip": p50_p99(health)[0]}),
                      flush=True)
            elif what == "concurrent":
                writers, seconds = int(numbers[0]), float(numbers[1])
                start = time.time() + 2 + 0.4 * writers
                procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(start), str(seconds)], env=cluster.env,
                                          stdout=subprocess.PIPE, text=True) for _ in range(writers)]
                before = requests()
                samples = []
                for p in procs:
                    samples += json.loads(p.communicate(timeout=300)[0])
                # the writers' own warm-up calls (200 each) count too: objects per Logic Module request
                per_request = (len(samples) + 200 * writers) / max(1, requests() - before)
                print(json.dumps({"load": load, "p50_p99": p50_p99(samples), "per_s": len(samples) / seconds,
                                  "per_request": per_request}), flush=True)
            elif what == "burst":
                before = requests()
                run = subprocess.run([sys.executable, "-c", BURST, numbers[0], numbers[1]], env=cluster.env,
                                     capture_output=True, text=True, timeout=300, check=True)
                objects = int(numbers[0]) * (int(numbers[1]) + 3)
                print(json.dumps({"load": load, "per_s": json.loads(run.stdout.strip().splitlines()[-1]),
                                  "per_request": objects / max(1, requests() - before)}), flush=True)
            else:
                break
        lm.close()


class Variant:
    """A checkout's cluster, driven by a process of that checkout."""

    def __init__(self, name: str, python: str, warmup: int):
        self.name = name
        self.proc = subprocess.Popen([python, str(pathlib.Path(__file__).resolve()), "--serve", str(warmup)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ask(None)

    def ask(self, command: str | None) -> dict:
        if command:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name}: the measuring process ended (its output above says why)")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=pathlib.Path, help="a built checkout of the code to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("-n", type=int, default=3000, help="single-client samples per round")
    parser.add_argument("--warmup", type=int, default=40000,
                        help="make_persistent calls before the first round (the JITs settle after about 25,000)")
    parser.add_argument("--writers", type=int, default=8, help="concurrent writer processes")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the writers write per round")
    parser.add_argument("--burst", type=int, default=200, help="a_make_persistent calls in flight at once")
    parser.add_argument("--burst-batches", type=int, default=20, help="bursts measured per round")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return 0
    print(f"machine: nproc {os.cpu_count()}, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}",
          flush=True)
    variants = []
    try:
        if args.baseline:
            variants.append(Variant("baseline", str(args.baseline / ".venv" / "bin" / "python"), args.warmup))
        variants.append(Variant("this", sys.executable, args.warmup))
        ratios: dict[str, list[float]] = {"one client p50": [], "one client p99": [], "writers objects/s": [],
                                          "burst objects/s": []}
        for r in range(1, args.rounds + 1):
            print(f"round {r} of {args.rounds}")
            single = {v.name: v.ask(f"single {args.n}") for v in variants}
            many = {v.name: v.ask(f"concurrent {args.writers} {args.seconds}") for v in variants}
            burst = {v.name: v.ask(f"burst {args.burst} {args.burst_batches}") for v in variants}
            for v in variants:
                s, m = single[v.name], many[v.name]
                lone, together = s["p50_p99"], m["p50_p99"]
                b = burst[v.name]
                print(f"  {v.name}\n"
                      f"    one client             p50 {lone[0] * 1e3:6.3f} ms  p99 {lone[1] * 1e3:6.3f} ms"
                      f"  (bare LM round trip p50 {s['lm_round_trip'] * 1e3:5.3f} ms; load {s['load']:.1f})\n"
                      f"    {args.writers:>3} writer processes   {m['per_s']:6.0f} objects/s,"
                      f" p50 {together[0] * 1e3:6.2f} ms  p99 {together[1] * 1e3:6.2f} ms,"
                      f" {m['per_request']:5.1f} objects per RegisterObjects"
                      f" (load {m['load']:.1f})\n"
                      f"    {args.burst:>3} calls at once       {b['per_s']:6.0f} objects/s,"
                      f" {b['per_request']:5.1f} objects per RegisterObjects (load {b['load']:.1f})")
            if args.baseline:
                ratios["one client p50"].append(single["this"]["p50_p99"][0] / single["baseline"]["p50_p99"][0])
                ratios["one client p99"].append(single["this"]["p50_p99"][1] / single["baseline"]["p50_p99"][1])
                ratios["writers objects/s"].append(many["this"]["per_s"] / many["baseline"]["per_s"])
                ratios["burst objects/s"].append(burst["this"]["per_s"] / burst["baseline"]["per_s"])
                print("  this/baseline: " + ", ".join(f"{k} x{v[-1]:.2f}" for k, v in ratios.items()), flush=True)
        if args.baseline:
            print("median this/baseline: " + ", ".join(f"{k} x{statistics.median(v):.2f}" for k, v in ratios.items()))
    finally:
        for v in variants:
            v.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
