"""Failover on namespace hosts, with the default settings (heartbeat 1 s, a backend dead after 5 s,
promotion after 6 s, a silent server given up after 1.2 s): over N rounds, the master of a counter
is cut off (link down, frozen with SIGSTOP, or killed, in turn) while 4 writers increment 4
replicated counters; each round measures

- read failover: a warm client's read of a replicated object mastered there, from the cut to the
  value served by a replica;
- promotion: the counter's writer's stall, from its last acknowledged increment before the cut to
  its first one on the promoted replica, and how many increments were refused in between;

then brings the host back and waits until the old master is a replica again. At the end, every
acknowledged increment must be in the counters. Baseline in the same run: the same read with the
liveness bound off (DATACLAY_UNREACHABLE_MS=0 in the client: gRPC and TCP alone), on a few link
cuts, and a read when nothing fails.

    sudo .venv/bin/python benchmarks/failover.py --rounds 20 [--baseline-rounds 3]
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

from harness.hosts import HostNetwork, unavailable  # noqa: E402
from harness.multihost import MultiHostCluster  # noqa: E402
from _cluster import SHIPPED  # noqa: E402  (the harness's 200 ms heartbeat back to the default)
from harness.writers import (FAULTS, Writers, final_counts, lost_or_doubled,  # noqa: E402
                             make_replicated_counters, wait_for_copies)


PROBE = """
import json, sys, time
from dataclay import api
from dataclay._internal.runtime import router
api.init()
from people.model import Counter
steps = []  # what the failed-over read did: each backend tried and Logic Module lookup, with its time
def timed(name, method):
    def wrapper(self, *args, **kwargs):
        started, outcome = time.monotonic(), "ok"
        try:
            return method(self, *args, **kwargs)
        except Exception as e:
            outcome = type(e).__name__
            raise
        finally:
            steps.append([name, str(args[0])[:8], round(time.monotonic() - started, 3), outcome])
    return wrapper
router.BackendRouter.on_backend = timed("call", router.BackendRouter.on_backend)
router.BackendRouter.object_info = timed("lookup", router.BackendRouter.object_info)
probe = Counter.get_by_alias(sys.argv[1])
probe.get()                                    # warm: connected to its master
started = time.monotonic(); probe.get()
print(json.dumps({"ready": round(time.monotonic() - started, 4)}), flush=True)
sys.stdin.readline()                           # the master is cut off now
steps.clear()
started = time.monotonic()
value = probe.get()
print(json.dumps({"read": round(time.monotonic() - started, 3), "value": value, "steps": steps}), flush=True)
"""


def probe_read(cluster, client, alias: str, cut, env: dict | None = None, give_up: float = 120) -> dict:
    """A warm read before and the first read after `cut()`, in one client process; a read still
    waiting after `give_up` seconds is reported as {"read": None}."""
    process = client.popen([sys.executable, "-c", PROBE, alias], env={**cluster.client_env(client), **(env or {})},
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready = json.loads(process.stdout.readline())
    cut()
    try:
        out, err = process.communicate("\n", timeout=give_up)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return {**ready, "read": None, "gave_up_after": give_up}
    if process.returncode != 0:
        raise RuntimeError(f"probe failed:\n{err[-2000:]}")
    return {**ready, **json.loads(out.strip().splitlines()[-1])}


def stall_after(stalls: list, cut_at: float) -> list | None:
    """The writer's stall that covers the moment of the cut."""
    for start, seconds, refused in stalls:
        if start - 1.0 <= cut_at <= start + seconds:
            return [start, seconds, refused]
    return None


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return (f"median {statistics.median(ordered):.3f}  p95 {p95:.3f}  min {ordered[0]:.3f}  "
            f"max {ordered[-1]:.3f}  (n={len(ordered)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--baseline-rounds", type=int, default=3)
    args = parser.parse_args()
    reason = unavailable()
    if reason:
        print(f"cannot run: {reason}")
        return 2
    faults = ["link", "freeze", "kill"]
    with HostNetwork(["node0", "node1", "node2", "node3", "node4"]) as network:
        cluster = MultiHostCluster(network, "node0", ["node1", "node2", "node3"], extra_env=SHIPPED)
        client = network["node4"]
        rows, baseline = [], []
        try:
            cluster.start()
            cluster.register_models()
            make_replicated_counters(cluster, client, "node1", ["node2", "node3"])
            seconds = args.rounds * 40 + 60
            writers = Writers(cluster, client, seconds=seconds).start()
            time.sleep(3)
            for i in range(args.rounds):
                fault = faults[i % len(faults)]
                master = network[final_counts(cluster, client, ["c0"])["c0"][1][0]]
                probe = f"probe{i}"  # read by a warm client: mastered on the host cut off, replicated
                make_replicated_counters(cluster, client, master.name,
                                         [b.name for b in cluster.backend_hosts if b is not master], [probe])
                cut_at = time.time()
                read = probe_read(cluster, client, probe, lambda: FAULTS[fault].cut(cluster, master))
                time.sleep(10)                                 # past the grace period: promoted
                FAULTS[fault].heal(cluster, master)
                cluster.wait_for_backends(3, timeout=180)
                wait_for_copies(cluster, client, 3, timeout=120)
                rows.append({"round": i, "fault": fault, "host": master.name, "cut_at": cut_at, **read})
                print(json.dumps(rows[-1]), flush=True)
            results = writers.wait()
            finals = final_counts(cluster, client)
            for i in range(args.baseline_rounds):
                master = network[final_counts(cluster, client, ["c0"])["c0"][1][0]]
                probe = f"baseline{i}"
                make_replicated_counters(cluster, client, master.name,
                                         [b.name for b in cluster.backend_hosts if b is not master], [probe])
                read = probe_read(cluster, client, probe, master.link_down, env={"DATACLAY_UNREACHABLE_MS": "0"},
                                  give_up=60)
                master.link_up()
                baseline.append(read)
                print(json.dumps({"baseline": read}), flush=True)
                cluster.wait_for_backends(3, timeout=180)
                wait_for_copies(cluster, client, 3, timeout=120)
        finally:
            network.restore()
            cluster.stop()
    lost = lost_or_doubled(results, finals)
    promotions = [stall_after(results["c0"]["stalls"], row["cut_at"]) for row in rows]
    print("\nread when nothing fails (s):  " + summary([r["ready"] for r in rows]))
    print("read failover (s):            " + summary([r["read"] for r in rows]))
    for fault in faults:
        print(f"  {fault:6}                      " + summary([r["read"] for r in rows if r["fault"] == fault]))
    if baseline:
        answered = [r["read"] for r in baseline if r["read"] is not None]
        print("read, liveness bound off (s): " + (summary(answered) if answered else "none answered")
              + f"; {len(baseline) - len(answered)} of {len(baseline)} still waiting after 60 s")
    found = [(row["fault"], p) for row, p in zip(rows, promotions) if p]
    print("writes stalled by promotion:  " + summary([p[1] for _, p in found]))
    for fault in faults:
        stalls = [p for f, p in found if f == fault]
        if stalls:
            print(f"  {fault:6} stall (s)             " + summary([p[1] for p in stalls]))
            print(f"  {fault:6} refused in it         " + summary([float(p[2]) for p in stalls]))
    print(f"acknowledged increments {sum(r['acked'] for r in results.values())}, in doubt "
          f"{sum(r['failed'] for r in results.values())}, lost or doubled: {lost or 'none'}")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
