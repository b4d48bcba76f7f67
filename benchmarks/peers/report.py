"""What peers.py prints: the warm rows with their promises and pmclay's ratios, the issue's
targets beside the measured ratios, the just-started figures and the concurrency runs."""
from __future__ import annotations

from _cluster import p50_p99

SYSTEMS = ("pmclay", "redis", "zodb", "zeo", "dataclay4")
# what pmclay / the peer (p50) must reach per operation, issue 25; the field read is held to
# the read's target
REDIS_TARGETS = {"update": 1.0, "read": 1.5, "field": 1.5}
P99_OVER_P50 = 2.0
AGAINST_DATACLAY4 = 1 / 5
JUST_STARTED_P50 = 1.3
JUST_STARTED_P99 = 3.0


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f}"


def verdict(ratio: float, target: float) -> str:
    return "met" if ratio <= target else "MISSED"


def print_warm(samples: dict, promises: dict[str, dict[str, str]]) -> None:
    """One row per operation and system: p50/p99 in µs, pmclay / this (p50 and p99), and what
    the call promises (durability) or does (reads)."""
    print(f"  {'op':<7} {'system':<10} {'p50 us':>8} {'p99 us':>8}  {'pmclay/this p50':>15} "
          f"{'p99':>6}  promise / what a call does")
    for op in ("update", "read", "field"):
        ours = p50_p99(samples[(op, "pmclay")])
        for system in SYSTEMS:
            if (op, system) in samples:
                p50, p99 = p50_p99(samples[(op, system)])
                print(f"  {op:<7} {system:<10} {us(p50):>8} {us(p99):>8}  {'x%.2f' % (ours[0] / p50):>15} "
                      f"{'x%.2f' % (ours[1] / p99):>6}  {promises[system][op]}")


def print_targets(samples: dict) -> None:
    """The issue's warm targets, each with the ratio this run measured."""
    print("targets (issue 25), measured in this run:")
    for op, target in REDIS_TARGETS.items():
        if ("update", "redis") not in samples:
            break
        ratio = p50_p99(samples[(op, "pmclay")])[0] / p50_p99(samples[(op, "redis")])[0]
        print(f"  {op:<7} pmclay p50 / Redis p50   x{ratio:.2f}  target <= {target}  {verdict(ratio, target)}")
    for op in REDIS_TARGETS:
        p50, p99 = p50_p99(samples[(op, "pmclay")])
        print(f"  {op:<7} pmclay p99 / pmclay p50  x{p99 / p50:.2f}  target <= {P99_OVER_P50}  "
              f"{verdict(p99 / p50, P99_OVER_P50)}")
    for op in REDIS_TARGETS:
        if (op, "dataclay4") in samples:
            ours, theirs = p50_p99(samples[(op, "pmclay")]), p50_p99(samples[(op, "dataclay4")])
            for i, which in enumerate(("p50", "p99")):
                ratio = ours[i] / theirs[i]
                print(f"  {op:<7} pmclay {which} / dataClay 4 {which}  x{ratio:.2f}  target <= {AGAINST_DATACLAY4}  "
                      f"{verdict(ratio, AGAINST_DATACLAY4)}")


def print_just_started(first: dict, samples: dict) -> None:
    """Per system: start to first call answered, then the next calls' p50/p99 against the warm
    p50 of the same system in this run (targets for pmclay: p50 <= 1.3x, p99 <= 3x warm p50)."""
    print("just started (start to first update answered; then the first calls of each operation):")
    for system, (startup, calls) in first.items():
        print(f"  {system:<10} start-up {startup:6.2f} s")
        for op, values in calls.items():
            if values:
                p50, p99 = p50_p99(values)
                warm = p50_p99(samples[(op, system)])[0]
                print(f"    {op:<7} first {len(values)}: p50 {us(p50):>7} us  p99 {us(p99):>7} us   "
                      f"/ warm p50: x{p50 / warm:.2f} (<= {JUST_STARTED_P50}), "
                      f"x{p99 / warm:.2f} (<= {JUST_STARTED_P99})")


def print_loads(loads: list, args) -> None:
    """Per system and client count: calls/s, p50/p99, CPU µs per call by process kind and summed."""
    if not loads:
        return
    print(f"concurrency: '{args.load_op}', each client its own counter, {args.seconds:g} s after "
          f"{args.load_warmup} unmeasured calls per client (ZODB FileStorage is single-client: not run)")
    for system, clients, result in loads:
        cpu = "  ".join(f"{kind} {value:,.0f}" for kind, value in result.cpu_us_per_call.items())
        total = sum(result.cpu_us_per_call.values())
        print(f"  {system:<7} {clients:>2} clients {result.calls_per_second:>8,.0f} calls/s  p50 {us(result.p50):>7} us"
              f"  p99 {us(result.p99):>7} us  CPU us/call: {cpu}  sum {total:,.0f}")
