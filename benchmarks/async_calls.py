#!/usr/bin/env python
"""Concurrent asyncio calls against sequential ones, on a real local cluster (kv engine, one backend):
for each kind of call, a batch of N awaited one after another, then N in flight at once from the same
event loop (asyncio.gather), in the same round. Printed per kind: the median and p99 latency of a
call in each mode, the batch's wall time, the ratio concurrent / sequential of the wall times, and
how many threads the process had (all of them, gRPC's own included, from /proc/self/task) before the
batch and while the N concurrent calls were in flight: no thread per call. The synchronous call is
the baseline of a sequential call.

Kinds: an `async def` active method awaited (Data Service and Python execution environment),
a_get_properties (Data Service only) and a_get_by_alias (Logic Module only)."""
import argparse
import asyncio
import os
import platform
import subprocess
import time

from _cluster import connected_cluster, p50_p99


def threads() -> int:
    """The threads of this process, Python's and gRPC core's alike."""
    return len(os.listdir("/proc/self/task"))


def machine() -> str:
    """CPU model, CPUs and load average, as the benchmark README records them."""
    try:
        model = next(line.split(":", 1)[1].strip() for line in subprocess.run(
            ["lscpu"], capture_output=True, text=True).stdout.splitlines() if line.startswith("Model name"))
    except (OSError, StopIteration):
        model = platform.processor() or "unknown"
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{model}, nproc {os.cpu_count()}, load average {load}"


async def sequential(calls) -> tuple[list, float]:
    """Each call awaited before the next: (latencies, wall time)."""
    samples = []
    started = time.perf_counter()
    for call in calls:
        t = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - t)
    return samples, time.perf_counter() - started


async def concurrent(calls) -> tuple[list, float, int]:
    """Every call in flight at once: (latencies from the batch's start, wall time, threads while in flight)."""
    done = []

    async def one(call, started):
        await call()
        done.append(time.perf_counter() - started)

    started = time.perf_counter()
    tasks = [asyncio.ensure_future(one(call, started)) for call in calls]
    await asyncio.sleep(0)
    in_flight = threads()
    await asyncio.gather(*tasks)
    return done, time.perf_counter() - started, in_flight


def line(name, samples, wall) -> str:
    p50, p99 = p50_p99(samples)
    return f"    {name:<11} p50 {p50 * 1e3:8.3f} ms   p99 {p99 * 1e3:8.3f} ms   batch {wall * 1e3:8.1f} ms"


async def measure(kinds, n, rounds, warmup):
    for round_ in range(1, rounds + 1):
        print(f"round {round_} of {rounds}")
        for name, make_call, sync_call in kinds:
            calls = [make_call(i) for i in range(n)]
            for _ in range(warmup):
                await concurrent(calls)
            threads_before = threads()
            seq, seq_wall = await sequential(calls)
            con, con_wall, in_flight = await concurrent(calls)
            t = time.perf_counter()
            sync = []
            for i in range(n):
                s = time.perf_counter()
                sync_call(i)
                sync.append(time.perf_counter() - s)
            sync_wall = time.perf_counter() - t
            print(f"  {name} ({n} calls)")
            print(line("sync", sync, sync_wall))
            print(line("sequential", seq, seq_wall))
            print(line("concurrent", con, con_wall))
            print(f"    ratio concurrent/sequential {con_wall / seq_wall:.3f}   threads {threads_before} before, "
                  f"{in_flight} with {n} calls in flight")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=200, help="calls per batch")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=20, help="unmeasured concurrent batches per kind and round")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    with connected_cluster(backends=1, store="kv", store_size="1G"):
        from people.model import Counter
        counters = [Counter(0) for _ in range(args.n)]
        for c in counters:
            c.make_persistent()
        counters[0].make_persistent(alias="async-bench")
        kinds = [
            ("awaited async active method", lambda i: lambda: counters[i].increment_later(1),
             lambda i: counters[i].increment(1)),
            ("a_get_properties", lambda i: counters[i].a_get_properties, lambda i: counters[i].get_properties()),
            ("a_get_by_alias", lambda i: lambda: Counter.a_get_by_alias("async-bench"),
             lambda i: Counter.get_by_alias("async-bench")),
        ]
        asyncio.run(measure(kinds, args.n, args.rounds, args.warmup))
        print(f"machine at the end: {machine()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
