#!/usr/bin/env python
"""What serving Prometheus metrics costs a warm method call, on one one-backend `kv` cluster with
DATACLAY_METRICS_PORT set, in alternating blocks:
- "idle": nobody scrapes;
- "scraped": a separate process scrapes the Logic Module's and the backend's /metrics every
  --scrape-interval seconds (Prometheus' default is 15 s; 1 s is the most anyone configures).
The scraper is stopped (SIGSTOP) and resumed (SIGCONT) between blocks, and which block goes first
alternates round by round, so drift falls on both alike. Per round and block: p50 and p99 of an
active method that changes state (increment) and of one that reads it (get), and the ratio of
"scraped" over "idle".

The calls are counted and timed by the servers whether or not anyone scrapes (GetStats reads the
same counters); what that costs per call is measured alone, without a network, by
benchmarks/java/InterceptorCost.java. Two clusters started alike differ by up to 50 % in p50 on
this 2-CPU machine (measured 2026-11-27), so an "off" cluster beside an "on" one would measure the
clusters, not the metrics: one cluster is measured against itself."""
import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

from _cluster import Side, models_importable, p50_p99
from _cpu_time import cpu_seconds
from _timing import timed

SCRAPER = """
import pathlib, sys, time, urllib.request
token_file, interval, ports = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
headers = {"Authorization": "Bearer " + pathlib.Path(token_file).read_text().strip()}
while True:
    for port in ports:
        request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers=headers)
        with urllib.request.urlopen(request, timeout=10) as r:
            r.read()
    time.sleep(interval)
"""


def metrics_request(side: Side, port: int) -> urllib.request.Request:
    """A scrape of 127.0.0.1:port/metrics with the bearer token `dataclay start` made."""
    token = (side.cluster.home / "metrics.token").read_text().strip()
    return urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {token}"})


def free_pair() -> int:
    """A port p with p and p + 1 free now (the launcher gives backend 0 the port p + 1)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            with socket.socket() as s:
                s.bind(("127.0.0.1", port + 1))
            return port
        except OSError:
            continue


def scrape_cost(side: Side, port: int, scrapes: int) -> None:
    """Each server's CPU and the scrape's wall time per scrape of its /metrics, over `scrapes`
    back-to-back scrapes (the client's calls stopped): what a scrape costs, whatever its interval."""
    pids = side.cluster.pids()
    for name, metrics_port in (("logicmodule", port), ("backend-1", port + 1)):
        request = metrics_request(side, metrics_port)
        urllib.request.urlopen(request, timeout=10).read()
        before, started = cpu_seconds(pids[name]), time.perf_counter()
        size = 0
        for _ in range(scrapes):
            with urllib.request.urlopen(request, timeout=10) as r:
                size = len(r.read())
        wall, cpu = time.perf_counter() - started, cpu_seconds(pids[name]) - before
        print(f"    scrape of the {name:<11} {size / 1024:5.1f} KiB: {wall / scrapes * 1e3:5.2f} ms wall, "
              f"{cpu / scrapes * 1e3:5.2f} ms of the server's CPU; every 15 s: {cpu / scrapes / 15 * 100:.3f} % of a CPU",
              flush=True)


def report(name: str, samples: list[float], base_p50: float | None) -> float:
    p50, p99 = p50_p99(samples)
    ratio = f"  x{p50 / base_p50:.3f} of idle" if base_p50 else ""
    print(f"    {name:<36} p50 {p50 * 1e6:7.1f} us   p99 {p99 * 1e6:7.1f} us{ratio}", flush=True)
    return p50


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=20000, help="samples per figure")
    parser.add_argument("--warmup", type=int, default=20000, help="unmeasured calls before each figure")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; the first runs on just-started servers")
    parser.add_argument("--scrapes", type=int, default=300, help="back-to-back scrapes timed at the end")
    parser.add_argument("--scrape-interval", type=float, default=1.0, help="seconds between scrapes")
    args = parser.parse_args()
    models_importable()
    port = free_pair()
    side = Side("metrics on", {"DATACLAY_METRICS_PORT": str(port)})
    scraper = None
    try:
        side.start()
        scraper = subprocess.Popen([sys.executable, "-c", SCRAPER, str(side.cluster.home / "metrics.token"),
                                    str(args.scrape_interval), str(port), str(port + 1)])
        scraper.send_signal(signal.SIGSTOP)
        with side.active():
            for round_ in range(1, args.rounds + 1):
                print(f"round {round_} of {args.rounds}{' (servers just started)' if round_ == 1 else ''}")
                results = {}
                for block in (("idle", "scraped") if round_ % 2 else ("scraped", "idle")):
                    scraper.send_signal(signal.SIGCONT if block == "scraped" else signal.SIGSTOP)
                    results[block] = {
                        "increment": timed(side.counter.increment, args.n, args.warmup),
                        "get": timed(side.counter.get, args.n, args.warmup),
                    }
                scraper.send_signal(signal.SIGSTOP)
                for what, label in (("increment", "active method, changes state"),
                                    ("get", "active method, reads state")):
                    base = report(f"idle    {label}", results["idle"][what], None)
                    report(f"scraped {label}", results["scraped"][what], base)
        print(f"each scrape alone ({args.scrapes} back to back, no calls):")
        scrape_cost(side, port, args.scrapes)
        scraper.send_signal(signal.SIGCONT)
        if scraper.poll() is not None:
            print(f"the scraper stopped early (exit {scraper.returncode}): the 'scraped' figures are not valid")
            return 1
    finally:
        if scraper is not None:
            scraper.kill()
            scraper.wait()
        side.stop()
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
