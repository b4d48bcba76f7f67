#!/usr/bin/env python
"""How long a local cluster takes to come up, and a killed backend to serve again, with and
without the servers' class archives (DATACLAY_CLASS_ARCHIVES=use|off).

Per round and mode: `dataclay start --backends 2` on a fresh home (kv engine on /dev/shm); then
backend-1 is killed with SIGKILL while a client keeps calling a method of an object stored there,
`dataclay start` restarts it, and the figure is the time from the kill to the first call that
succeeds again."""
import argparse
import os
import statistics
import sys
import textwrap
import time

from _cluster import Cluster

CALLER = textwrap.dedent("""
    import sys, time
    from dataclay import api
    from dataclay.exceptions import DataClayException
    api.init()
    from people.model import Counter
    backend = next(i for i, info in api.get_backends().items() if info.name == sys.argv[1])
    counter = Counter(0)
    counter.make_persistent(backend_id=backend)
    print("ready", flush=True)
    while True:
        try:
            counter.increment()
            print(time.monotonic(), flush=True)
        except DataClayException:
            pass
        time.sleep(0.01)
""")


def one_round(mode: str) -> tuple[float, float]:
    """(seconds of a fresh start, seconds from killing a backend to a call served by it again)."""
    cluster = Cluster(backends=2, store="kv", extra_env={"DATACLAY_CLASS_ARCHIVES": mode})
    try:
        start = time.monotonic()
        cluster.start()
        fresh = time.monotonic() - start
        cluster.register_models()
        caller = cluster.popen_client(CALLER, "backend-1")
        try:
            if caller.stdout.readline().strip() != "ready":
                caller.kill()
                raise RuntimeError(f"the calling client failed:\n{caller.stderr.read()}")
            caller.stdout.readline()  # one call served before the kill
            killed = time.monotonic()
            cluster.kill("backend-1")
            cluster.start()
            while True:
                line = caller.stdout.readline()
                if not line:
                    raise RuntimeError("the calling client stopped")
                if float(line) > killed:
                    return fresh, float(line) - killed
        finally:
            caller.kill()
            caller.wait()
    finally:
        cluster.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    results = {"use": [], "off": []}
    for _ in range(args.rounds):
        for mode in results:
            results[mode].append(one_round(mode))
    print(f"{args.rounds} round(s), 2 kv backends, load average {os.getloadavg()[0]:.1f} at end")
    print(f"{'class archives':<16}{'fresh start s (median)':>24}{'kill to served again s (median)':>34}")
    for mode, runs in results.items():
        print(f"{mode:<16}{statistics.median(r[0] for r in runs):>24.2f}{statistics.median(r[1] for r in runs):>34.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
