#!/usr/bin/env python
"""What TLS costs a Python client: a plaintext and a TLS cluster (`dataclay start --tls`) run side
by side, one backend each, `kv` on /dev/shm, and this process measures both in alternating rounds
(which goes first alternates too), so drift and noise fall on both alike. Per round and mode: p50
and p99 of a bare gRPC round trip to the Logic Module (Health), of an active method that changes
state (increment) and of one that reads it (get); then a new connection's first call (channel,
handshake, Health) on fresh channels. The ratio printed is TLS p50 / plaintext p50 of the same
round; the last round is the warm one."""
import argparse
import os
import sys

from _cluster import Side, models_importable, p50_p99
from _timing import timed


def first_call(side):
    """A new connection's first call: channel, handshake, Health."""
    from dataclay._internal.rpc import LogicModuleClient
    client = LogicModuleClient(side.config.lm_address, tls=side.config.tls)
    client.health(timeout=10)
    client.close()


def report(name, samples, plain_p50=None):
    p50, p99 = p50_p99(samples)
    ratio = f"  TLS/plain x{p50 / plain_p50:.2f}" if plain_p50 else ""
    print(f"    {name:<38} p50 {p50 * 1e3:7.3f} ms   p99 {p99 * 1e3:7.3f} ms{ratio}", flush=True)
    return p50


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=5000, help="samples per figure")
    parser.add_argument("--warmup", type=int, default=2000, help="unmeasured calls before each figure")
    parser.add_argument("--connections", type=int, default=200, help="fresh channels per round for the first call")
    parser.add_argument("--rounds", type=int, default=4, help="rounds; the first runs on cold servers")
    args = parser.parse_args()
    models_importable()
    sides = [Side("plaintext"), Side("TLS", tls=True)]
    try:
        for side in sides:
            side.start()
        for round_ in range(1, args.rounds + 1):
            print(f"round {round_} of {args.rounds}{' (servers just started)' if round_ == 1 else ''}")
            order = sides if round_ % 2 else sides[::-1]
            results = {}
            for side in order:
                with side.active():
                    results[side.name] = {
                        "health": timed(lambda: side.lm.health(timeout=5), args.n, args.warmup),
                        "increment": timed(side.counter.increment, args.n, args.warmup),
                        "get": timed(side.counter.get, args.n, args.warmup),
                        "first": timed(lambda: first_call(side), args.connections, 10),
                    }
            for what, label in (("health", "bare round trip (LM Health)"),
                                ("increment", "active method, changes state"),
                                ("get", "active method, reads state"),
                                ("first", "new channel: connect + first call")):
                plain = report(f"plaintext {label}", results["plaintext"][what])
                report(f"TLS       {label}", results["TLS"][what], plain)
    finally:
        for side in sides:
            side.stop()
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
