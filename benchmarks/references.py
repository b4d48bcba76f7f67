#!/usr/bin/env python
"""What checking references costs make_persistent (issue 21: a stored reference needs read access
to the object it names). One client makes persistent, on backend-1, a Node whose `next` is:

- nothing (the baseline of the same run);
- a Node made in the same call (never looked up);
- one existing Node of the client's dataset on the same backend (read from the store once, then
  remembered);
- one existing Node on the other backend (asked to the Logic Module once, then remembered);
- a different existing Node on the other backend each time (a Logic Module lookup every call: the
  worst case, which a program meets only the first time it links to each object).

Each figure is a median and p99 over -n calls, and a ratio against the baseline of the same round."""
from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def measure(n: int, make) -> tuple[float, float]:
    from _cluster import p50_p99
    samples = []
    for i in range(n):
        t = time.perf_counter()
        make(i)
        samples.append(time.perf_counter() - t)
    return p50_p99(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("-n", type=int, default=2000, help="calls per figure and round")
    parser.add_argument("--warmup", type=int, default=20000, help="make_persistent calls before the first round")
    args = parser.parse_args()
    from _cluster import connected_cluster

    print(f"machine: nproc {os.cpu_count()}, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}",
          flush=True)
    with connected_cluster(backends=2, store="kv", store_size="2G"):
        from dataclay import api
        from people.model import Node

        backends = sorted(api.get_backends().items(), key=lambda kv: kv[1].name)
        here, there = backends[0][0], backends[1][0]
        near = Node(0)
        near.make_persistent(backend_id=here)
        far = Node(0)
        far.make_persistent(backend_id=there)
        for _ in range(args.warmup):
            Node(1).make_persistent(backend_id=here)
        ratios: dict[str, list[float]] = {}
        for r in range(1, args.rounds + 1):
            fresh = []
            for _ in range(args.n):
                f = Node(0)
                f.make_persistent(backend_id=there)
                fresh.append(f)
            figures = {
                "no reference": measure(args.n, lambda i: Node(1).make_persistent(backend_id=here)),
                "same call": measure(args.n, lambda i: Node(1, Node(2)).make_persistent(backend_id=here)),
                "same backend": measure(args.n, lambda i: Node(1, near).make_persistent(backend_id=here)),
                "other backend": measure(args.n, lambda i: Node(1, far).make_persistent(backend_id=here)),
                "other backend, new each call": measure(
                    args.n, lambda i: Node(1, fresh[i]).make_persistent(backend_id=here)),
            }
            base = figures["no reference"][0]
            print(f"round {r} of {args.rounds} (load {os.getloadavg()[0]:.1f})")
            for name, (p50, p99) in figures.items():
                ratios.setdefault(name, []).append(p50 / base)
                print(f"  {name:<30} p50 {p50 * 1e3:6.3f} ms  p99 {p99 * 1e3:6.3f} ms  x{p50 / base:.2f}", flush=True)
        print("median p50 against no reference: "
              + ", ".join(f"{k} x{statistics.median(v):.2f}" for k, v in ratios.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
