#!/usr/bin/env python
"""Core latency and throughput of the Python API on a real local cluster (kv engine on /dev/shm):
p50/p99 of an active-method call on a small object, of get_by_alias and of make_persistent of one
small object; objects/s of make_persistent one by one and as one 10,000-object graph. The
baseline, measured in the same round, is a bare gRPC round trip to the Logic Module (Health).

The latencies are measured in rounds on one cluster. The first round starts on freshly started
servers, whose JVMs compile their gRPC and store paths during the first rounds; the last round is
the steady state of a long-running service."""
import argparse
import statistics
import sys
import time

from _cluster import connected_cluster, p50_p99
from _timing import timed

WARMUP = 2000  # unmeasured calls before each figure


def report(name, samples, baseline_p50=None):
    p50, p99 = p50_p99(samples)
    ratio = f"  x{p50 / baseline_p50:.2f} of baseline" if baseline_p50 else ""
    print(f"  {name:<44} p50 {p50 * 1e3:7.3f} ms   p99 {p99 * 1e3:7.3f} ms{ratio}")
    return p50


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=5000, help="samples per latency figure")
    parser.add_argument("--graph", type=int, default=10000, help="objects in the graph")
    parser.add_argument("--graph-warmup", type=int, default=3,
                        help="graphs made persistent first, unmeasured (the Data Service's JIT warms up on them)")
    parser.add_argument("--rounds", type=int, default=4, help="latency rounds; the first runs on cold servers")
    parser.add_argument("--store", default="kv")
    parser.add_argument("--tls", action="store_true",
                        help="a TLS cluster (dataclay start --tls); tls_cost.py compares it with plaintext")
    args = parser.parse_args()

    with connected_cluster(backends=1, store=args.store, store_size="2G", tls=args.tls) as cluster:
        from dataclay import getRuntime
        from dataclay._internal.rpc import LogicModuleClient
        from people.model import Counter, Node

        lm = LogicModuleClient(f"127.0.0.1:{cluster.port}", tls=getRuntime().config.tls)
        counter = Counter(0)
        counter.make_persistent(alias="bench")
        for round_ in range(1, args.rounds + 1):
            print(f"round {round_} of {args.rounds}{' (servers just started)' if round_ == 1 else ''}")
            base = report("baseline: gRPC round trip (LM Health)", timed(lambda: lm.health(timeout=5), args.n, WARMUP))
            report("active method, changes state (increment)", timed(counter.increment, args.n, WARMUP), base)
            report("active method, reads state (get)", timed(counter.get, args.n, WARMUP), base)
            report("get_by_alias", timed(lambda: Counter.get_by_alias("bench"), args.n, WARMUP), base)
            one = timed(lambda: Counter(1).make_persistent(), args.n, WARMUP)
            report("make_persistent, one small object", one, base)
            print(f"  {'make_persistent one by one':<44} {len(one) / sum(one):9.0f} objects/s")

        rates = []
        for round_ in range(args.graph_warmup + 5):
            head = None
            for i in range(args.graph):
                head = Node(i, head)
            t = time.perf_counter()
            head.make_persistent()
            if round_ >= args.graph_warmup:
                rates.append(args.graph / (time.perf_counter() - t))
        print(f"{f'make_persistent of a {args.graph}-object graph':<44} {statistics.median(rates):9.0f} objects/s "
              f"(median of 5 after {args.graph_warmup} unmeasured; min {min(rates):.0f}, max {max(rates):.0f})")
        lm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
