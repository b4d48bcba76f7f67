"""Runs in dataClay 4.3.1's own virtualenv (its package is also named `dataclay`): times
Counter.increment(), Counter.get() and the field read `counter.value` (a request to the backend
in dataClay 4 too) against the dataClay 4 services peers.py started, and prints the samples
(seconds) as the last line of its output, one JSON document:
{"update": [...], "read": [...], "field": [...], "first": {...}, "startup": s}
(dataClay 4 may log to standard output before it). "first" holds the first `just_started` calls
of each operation, taken before the warm-up; "startup" is from `launched` (a time.time() taken
before peers.py started the services) to the first call answered.

    dataclay4_client.py PORT N WARMUP ROUNDS JUST_STARTED LAUNCHED"""
import json
import sys
import time

from _timing import timed
from dataclay import Client
from dataclay4_counter import Counter


def main():
    port, n, warmup, rounds, just_started = (int(a) for a in sys.argv[1:6])
    launched = float(sys.argv[6])
    client = Client(host="127.0.0.1", port=port)
    client.start()
    try:
        counter = Counter()
        counter.make_persistent()
        counter.increment()
        startup = time.time() - launched
        operations = {"update": counter.increment, "read": counter.get, "field": lambda: counter.value}
        first = {op: timed(fn, just_started) for op, fn in operations.items()}
        for fn in operations.values():
            timed(fn, warmup)
        samples = {op: [] for op in operations}
        for _ in range(rounds):
            for op, fn in operations.items():
                samples[op] += timed(fn, n // rounds)
        assert counter.get() == 1 + just_started + warmup + n // rounds * rounds
        print("\n" + json.dumps({**samples, "first": first, "startup": startup}))
    finally:
        client.stop()


if __name__ == "__main__":
    main()
