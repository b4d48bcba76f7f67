#!/usr/bin/env python
"""How long this machine takes to wake a blocked process: the round trip of one byte between two
processes over a pair of pipes, with the two free to run on any CPU and with both pinned to one.

Every dataClay call crosses several processes (client, Data Service, execution environment), each
blocked until the previous one writes; on a virtual machine whose idle vCPUs halt, each of those
wake-ups can cost tens of microseconds. Run this before comparing latency figures across machines."""
import argparse
import os
import sys
import time


def round_trip_us(n: int) -> float:
    """Mean microseconds of one byte sent to a child process and back, `n` times."""
    to_child_r, to_child_w = os.pipe()
    to_parent_r, to_parent_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        for _ in range(n):
            os.read(to_child_r, 1)
            os.write(to_parent_w, b"x")
        os._exit(0)
    start = time.perf_counter()
    for _ in range(n):
        os.write(to_child_w, b"x")
        os.read(to_parent_r, 1)
    elapsed = time.perf_counter() - start
    os.waitpid(pid, 0)
    for fd in (to_child_r, to_child_w, to_parent_r, to_parent_w):
        os.close(fd)
    return elapsed / n * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=20000, help="round trips per figure")
    parser.add_argument("--runs", type=int, default=3, help="figures per placement")
    args = parser.parse_args()
    if args.n < 1 or args.runs < 1:
        parser.error("-n and --runs must be at least 1")
    cpus = sorted(os.sched_getaffinity(0))
    print(f"CPUs available: {len(cpus)}")
    any_cpu = [round_trip_us(args.n) for _ in range(args.runs)]
    os.sched_setaffinity(0, {cpus[0]})
    one_cpu = [round_trip_us(args.n) for _ in range(args.runs)]
    os.sched_setaffinity(0, set(cpus))
    print(f"  pipe round trip, any CPU   {' '.join(f'{v:7.1f}' for v in any_cpu)} us")
    print(f"  pipe round trip, one CPU   {' '.join(f'{v:7.1f}' for v in one_cpu)} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
