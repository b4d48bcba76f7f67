#!/usr/bin/env python
"""What serving Prometheus metrics costs a warm method call. Three one-backend `kv` clusters run
side by side:
- "off": no metrics endpoint;
- "on": DATACLAY_METRICS_PORT set, nobody scraping;
- "scraped": the same, with a separate process scraping the Logic Module's and the backend's
  /metrics every --scrape-interval seconds (Prometheus' default is 15 s; 1 s is the worst case
  anyone configures).

The calls are counted and timed by the servers in all three (GetStats reads the same counters);
what differs is the endpoint and the scrapes. This process measures the three in alternating
rounds, rotating which goes first. Per round and side: p50 and p99 of an active method that
changes state (increment) and of one that reads it (get). The ratio printed is each side's p50
over "off"'s in the same round."""
import argparse
import os
import socket
import subprocess
import sys

from _cluster import REPO, Side, p50_p99
from _timing import timed

SCRAPER = """
import sys, time, urllib.request
ports, interval = sys.argv[1:-1], float(sys.argv[-1])
while True:
    for port in ports:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            r.read()
    time.sleep(interval)
"""


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


def report(name: str, samples: list[float], base_p50: float | None) -> float:
    p50, p99 = p50_p99(samples)
    ratio = f"  x{p50 / base_p50:.3f} of off" if base_p50 else ""
    print(f"    {name:<34} p50 {p50 * 1e6:7.1f} us   p99 {p99 * 1e6:7.1f} us{ratio}", flush=True)
    return p50


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=20000, help="samples per figure")
    parser.add_argument("--warmup", type=int, default=20000, help="unmeasured calls before each figure")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; the first runs on just-started servers")
    parser.add_argument("--scrape-interval", type=float, default=1.0, help="seconds between scrapes")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "tests" / "models"))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "tests" / "models"),
                                                             os.environ.get("PYTHONPATH")]))
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    on_port, scraped_port = free_pair(), None
    while scraped_port is None or abs(scraped_port - on_port) < 2:
        scraped_port = free_pair()
    sides = [Side("off"), Side("on", {"DATACLAY_METRICS_PORT": str(on_port)}),
             Side("scraped", {"DATACLAY_METRICS_PORT": str(scraped_port)})]
    scraper = None
    try:
        for side in sides:
            side.start()
        scraper = subprocess.Popen([sys.executable, "-c", SCRAPER, str(scraped_port), str(scraped_port + 1),
                                    str(args.scrape_interval)])
        for round_ in range(1, args.rounds + 1):
            print(f"round {round_} of {args.rounds}{' (servers just started)' if round_ == 1 else ''}")
            shift = (round_ - 1) % len(sides)
            results = {}
            for side in sides[shift:] + sides[:shift]:
                with side.active():
                    results[side.name] = {
                        "increment": timed(side.counter.increment, args.n, args.warmup),
                        "get": timed(side.counter.get, args.n, args.warmup),
                    }
            for what, label in (("increment", "active method, changes state"), ("get", "active method, reads state")):
                base = report(f"off     {label}", results["off"][what], None)
                report(f"on      {label}", results["on"][what], base)
                report(f"scraped {label}", results["scraped"][what], base)
        if scraper.poll() is not None:
            print(f"the scraper stopped early (exit {scraper.returncode}): the 'scraped' figures are not valid")
            return 1
    finally:
        if scraper is not None:
            scraper.kill()
            scraper.wait()
        for side in sides:
            side.stop()
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
