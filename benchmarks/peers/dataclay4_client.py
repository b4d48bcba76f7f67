"""Runs in dataClay 4.3.1's own virtualenv (its package is also named `dataclay`): times
Counter.increment() and Counter.get() against the dataClay 4 services peers.py started, and prints
the samples (seconds) as the last line of its output, one JSON document:
{"update": [...], "read": [...]} (dataClay 4 may log to standard output before it)."""
import json
import sys

from _timing import timed
from dataclay import Client
from dataclay4_counter import Counter




def main():
    port, n, warmup, rounds = (int(a) for a in sys.argv[1:5])
    client = Client(host="127.0.0.1", port=port)
    client.start()
    try:
        counter = Counter()
        counter.make_persistent()
        timed(counter.increment, warmup)
        timed(counter.get, warmup)
        samples = {"update": [], "read": []}
        for _ in range(rounds):
            samples["update"] += timed(counter.increment, n // rounds)
            samples["read"] += timed(counter.get, n // rounds)
        assert counter.get() == warmup + n // rounds * rounds
        print("\n" + json.dumps(samples))
    finally:
        client.stop()


if __name__ == "__main__":
    main()
