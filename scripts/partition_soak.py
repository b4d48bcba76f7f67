#!/usr/bin/env python3
"""The long version of tests/test_failover.py's writer test: N rounds, each cutting off the
master's host, freezing it (SIGSTOP), cutting off the Logic Module's host, cutting off the clients'
host and killing the master (kill -9, then a restart), while 4 writers increment 4 counters
replicated on 3 backends. After every round every acknowledged increment must be in the counters
(and nothing beyond those in doubt), and every counter must have its 3 copies back.

Runs on the default settings (heartbeat 1 s, promotion after 6 s) unless --fast. As root:

    .venv/bin/python scripts/partition_soak.py --rounds 20 [--fast]

Exit status 1 when an acknowledged increment was lost or applied twice."""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

from harness.hosts import HostNetwork, unavailable  # noqa: E402
from harness.multihost import MultiHostCluster  # noqa: E402
from harness.writers import (COUNTERS, FAULTS, Writers, lost_or_doubled, make_replicated_counters, master_host,  # noqa: E402
                             wait_for_copies)

STEPS = (("link", "master", 9), ("freeze", "master", 9), ("link", "node0", 6), ("link", "node4", 4),
         ("kill", "master", 8))
FAST = {"DATACLAY_BACKEND_TIMEOUT_MS": "1500", "DATACLAY_PROMOTE_AFTER_MS": "3000"}


def one_round(cluster: MultiHostCluster, network: HostNetwork, speed: float, totals: dict) -> dict:
    """Runs the five faults under 4 writers; adds their counts to `totals` (alias -> acked, failed
    since the counters were made) and returns the round's report, checked against the totals."""
    client = network["node4"]
    writers = Writers(cluster, client, seconds=900).start()
    time.sleep(3)
    timeline = []
    try:
        for fault, target, hold in STEPS:
            host = master_host(cluster, client) if target == "master" else network[target]
            FAULTS[fault].cut(cluster, host)
            time.sleep(hold * speed)
            FAULTS[fault].heal(cluster, host)
            timeline.append(f"{fault}:{host.name}")
            cluster.wait_for_backends(3, timeout=180)
            wait_for_copies(cluster, client, 3, timeout=120)
    finally:
        network.restore()
    results = writers.wait()
    for alias, r in results.items():
        for key in ("acked", "failed"):
            totals[alias][key] += r[key]
    finals = wait_for_copies(cluster, client, 3, timeout=120)
    broken = lost_or_doubled(totals, finals)
    missing = {a: copies for a, (_, copies) in finals.items() if len(copies) != 3}
    stalls = [s[1] for r in results.values() for s in r["stalls"]]
    return {"faults": timeline, "acked": sum(r["acked"] for r in results.values()),
            "in_doubt": sum(r["failed"] for r in results.values()), "longest_stall_s": max(stalls, default=0),
            "lost_or_doubled": broken, "missing_copies": missing}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--fast", action="store_true", help="promotion after 3 s (the suite's settings)")
    args = parser.parse_args()
    reason = unavailable()
    if reason:
        print(f"cannot run: {reason}")
        return 2
    env = FAST if args.fast else {"DATACLAY_HEARTBEAT_MS": "1000"}
    failed = 0
    with HostNetwork(["node0", "node1", "node2", "node3", "node4"]) as network:
        cluster = MultiHostCluster(network, "node0", ["node1", "node2", "node3"], extra_env=env)
        try:
            cluster.start()
            cluster.register_models()
            make_replicated_counters(cluster, network["node4"], "node1", ["node2", "node3"])
            totals = {alias: {"acked": 0, "failed": 0} for alias in COUNTERS}
            started = time.monotonic()
            for i in range(args.rounds):
                report = one_round(cluster, network, 0.5 if args.fast else 1.0, totals)
                failed += bool(report["lost_or_doubled"] or report["missing_copies"])
                print(json.dumps({"round": i, "elapsed_s": round(time.monotonic() - started), **report}), flush=True)
        finally:
            cluster.stop()
    print(f"{args.rounds} rounds of {len(STEPS)} faults: {failed} with a lost or doubled increment or a missing copy")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
