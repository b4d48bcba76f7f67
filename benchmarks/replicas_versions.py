#!/usr/bin/env python
"""new_replica and new_version of a 1 MiB object (a bytes field) on a fresh two-backend cluster
(kv engine on /dev/shm): p50, mean and p99 time per operation over N objects, and the bytes the
Data Service reports it sent to another backend for it (bytes_sent of its answer). The baseline,
measured in the same run, is make_persistent of the same 1 MiB object (one client-to-backend copy).
Each operation is timed on a fresh object, through the client runtime (the public methods add
only argument checks: p.new_replica() returns the backend of the copy, p.new_version() the version)."""
import argparse
import os
import statistics
import sys
import time

from _cluster import connected_cluster, p50_p99

MIB = 1 << 20


def summary(name: str, samples: list, sent: list, baseline_p50: float | None = None) -> float:
    """Prints one line of figures and returns the p50 in seconds."""
    p50, p99 = p50_p99(samples)
    ratio = f"  x{p50 / baseline_p50:5.2f} of baseline" if baseline_p50 else ""
    moved = f"  sent {statistics.mean(sent):9.0f} B/op" if sent else ""
    print(f"{name:<42} p50 {p50 * 1e3:7.2f} ms  mean {statistics.mean(samples) * 1e3:7.2f} ms  "
          f"p99 {p99 * 1e3:7.2f} ms{moved}{ratio}")
    return p50


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=40, help="objects (timed operations) per figure")
    parser.add_argument("--size", type=int, default=MIB, help="payload bytes")
    parser.add_argument("--store", default="kv")
    args = parser.parse_args()
    if args.n < 1 or args.size < 0:
        parser.error("-n must be at least 1 and --size not negative")

    with connected_cluster(backends=2, store=args.store, store_size="2G"):
        from dataclay import api, getRuntime
        from payloads.model import Blob

        runtime = getRuntime()
        home, other = sorted(api.get_backends())
        payload = os.urandom(args.size)

        def fresh() -> "Blob":
            blob = Blob(payload)
            blob.make_persistent(backend_id=home)
            return blob

        for _ in range(5):  # warm-up: channels, the execution environments, the code paths
            blob = fresh()
            runtime.new_replica(blob, other, False)
            runtime.new_version(blob, other)

        figures = {"make_persistent (baseline)": ([], []), "new_replica to the other backend": ([], []),
                   "new_version on the same backend": ([], []), "new_version on the other backend": ([], [])}
        for _ in range(args.n):
            blob = Blob(payload)
            start = time.perf_counter()
            blob.make_persistent(backend_id=home)
            figures["make_persistent (baseline)"][0].append(time.perf_counter() - start)
            for name, op in (("new_replica to the other backend", lambda: runtime.new_replica(blob, other, False)),
                             ("new_version on the same backend", lambda: runtime.new_version(blob, None)),
                             ("new_version on the other backend", lambda: runtime.new_version(blob, other))):
                start = time.perf_counter()
                outcome = op()
                figures[name][0].append(time.perf_counter() - start)
                figures[name][1].append(outcome.bytes_sent)
            assert blob.size() == args.size

        print(f"{args.n} objects of {args.size / MIB:.2f} MiB, 2 backends, {args.store} engine; "
              f"load average {os.getloadavg()[0]:.1f}")
        baseline = summary("make_persistent (baseline)", *figures["make_persistent (baseline)"])
        for name, (samples, sent) in figures.items():
            if name != "make_persistent (baseline)":
                summary(name, samples, sent, baseline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
