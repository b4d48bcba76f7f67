#!/usr/bin/env python
"""How the server JVMs' JIT settings trade start-up time against warm-up: for each set of JVM
options (DATACLAY_JAVA_OPTS), in alternating order per pair of runs, a fresh one-backend cluster
(kv on /dev/shm) is started and timed, then the Python API figures of core_latency.py are taken
in rounds of -n calls each (after 500 unmeasured), so round R ends R x 5 x (n + 500) calls after
the start. A cluster whose JIT has caught up serves the later rounds at warm speed."""
import argparse
import subprocess
import sys

from _cluster import connected_cluster, p50_p99
from core_latency import timed

DEFAULTS = [
    "-XX:CompileThresholdScaling=1",  # HotSpot's own thresholds (what `dataclay start` uses)
    "-XX:CompileThresholdScaling=0.1",  # every tier compiles after a tenth of the calls
    # only C2 (tier 4) a tenth sooner: C1 still compiles as usual during start-up
    "-XX:Tier4InvocationThreshold=500 -XX:Tier4MinInvocationThreshold=60 "
    "-XX:Tier4CompileThreshold=1500 -XX:Tier4BackEdgeThreshold=4000",
]


def one_run(options: str, rounds: int, n: int) -> None:
    with connected_cluster(backends=1, store="kv", store_size="2G", java_opts=options) as cluster:
        from dataclay._internal.rpc import LogicModuleClient
        from people.model import Counter

        lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
        counter = Counter(0)
        counter.make_persistent(alias="bench")
        figures = [("round trip", lambda: lm.health(timeout=5)), ("increment", counter.increment),
                   ("get", counter.get), ("get_by_alias", lambda: Counter.get_by_alias("bench")),
                   ("make_persistent", lambda: Counter(1).make_persistent())]
        print(f"[{options}] dataclay start {cluster.start_seconds:.2f} s", flush=True)
        for round_ in range(1, rounds + 1):
            cells = []
            for name, call in figures:
                samples = timed(call, n, warmup=500)
                cells.append(f"{name} {p50_p99(samples)[0] * 1e3:.3f}")
                if name == "make_persistent":
                    cells.append(f"{len(samples) / sum(samples):.0f}/s")
            print(f"[{options}] round {round_}: p50 ms " + "  ".join(cells), flush=True)
        lm.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("options", nargs="*", help="JVM option sets to compare, one string each, after `--` (they start with a dash)")
    parser.add_argument("--pairs", type=int, default=2, help="runs per option set, the order alternating")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("-n", type=int, default=3000, help="samples per figure and round")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a single run, in a process of its own
    args = parser.parse_args()
    if args.one is not None:
        one_run(args.one, args.rounds, args.n)
        return 0
    sets = args.options or DEFAULTS
    for pair in range(args.pairs):
        for options in (sets if pair % 2 == 0 else list(reversed(sets))):
            subprocess.run([sys.executable, __file__, f"--one={options}", "--rounds", str(args.rounds),
                            "-n", str(args.n)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
