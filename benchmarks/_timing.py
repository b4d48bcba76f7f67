"""Timing shared by the benchmarks, with no import of dataclay: it also runs in dataClay 4's own
virtualenv (peers/dataclay4_client.py)."""
import time


def timed(fn, n: int, warmup: int = 0) -> list[float]:
    """`warmup` unmeasured calls of fn, then the seconds each of n calls took."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return samples


def p50_p99(samples: list[float]) -> tuple[float, float]:
    """The median and the 99th percentile of `samples`."""
    ordered = sorted(samples)
    return ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
