#!/usr/bin/env python
"""Export and import throughput of a ~1 GB dataset (issue 16) against a plain `cp` of the pool files,
measured in the same run.

A two-backend kv cluster (pools on /dev/shm) holds --large objects of 1 MiB and --small objects of
1 KiB. Each round copies the source's pool directories to disk with `cp -r` (then syncs the copies,
as an export syncs its files), runs `dataclay export` to a new directory on the same disk, times the
check of that snapshot alone (the first phase of an import, in this process), and runs
`dataclay import` into a fresh two-backend kv cluster. It prints MB/s (snapshot bytes, or pool bytes
for cp) and objects/s per round, then the median and the spread (min-max) over the rounds."""
import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from _cluster import REPO, Cluster

MIB = 1 << 20
DATACLAY = str(pathlib.Path(sys.executable).parent / "dataclay")

POPULATE = """
import sys
from dataclay import api
api.init()
from people.model import Person
from payloads.model import Blob
large, small = int(sys.argv[1]), int(sys.argv[2])
b = sorted(api.get_backends())
for i in range(large):
    Blob(bytes([i % 251]) * (1 << 20)).make_persistent(alias=f"large-{i}", backend_id=b[i % len(b)])
for g in range(0, small, 1000):
    root = Person(f"group-{g}", g)
    root.friends = [Blob(bytes([g % 251]) * 1024) for _ in range(min(1000, small - g))]
    root.make_persistent(alias=f"group-{g}", backend_id=b[(g // 1000) % len(b)])
api.finish()
"""


def timed(args, env) -> float:
    started = time.perf_counter()
    result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=3600)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{result.stdout}{result.stderr}")
    return elapsed


def copy_pools(pools: pathlib.Path, target: pathlib.Path) -> tuple[float, int]:
    """cp -r of every pool directory, then fsync of the copies; (seconds, bytes copied)."""
    started = time.perf_counter()
    subprocess.run(["cp", "-r", str(pools), str(target)], check=True, timeout=3600)
    copied = 0
    for path in target.rglob("*"):
        if path.is_file():
            copied += path.stat().st_size
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    return time.perf_counter() - started, copied


def report(name: str, seconds: list, nbytes: int, objects: int | None, baseline: list | None = None) -> None:
    median = statistics.median(seconds)
    rates = [nbytes / s / 1e6 for s in seconds]
    line = (f"{name:<26} {median:7.2f} s ({min(seconds):.2f}-{max(seconds):.2f})  "
            f"{statistics.median(rates):7.1f} MB/s ({min(rates):.1f}-{max(rates):.1f})")
    if objects:
        line += f"  {objects / median:9,.0f} objects/s"
    if baseline:
        line += f"  x{median / statistics.median(baseline):.2f} of cp"
    print(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--large", type=int, default=960, help="objects of 1 MiB")
    parser.add_argument("--small", type=int, default=64_000, help="objects of 1 KiB")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pool", default="1G", help="pool size per backend")
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where snapshots and copies go (a disk)")
    args = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-export-bench-", dir=args.dir))
    source = Cluster(backends=2, store="kv", store_size=args.pool)
    targets = []
    try:
        source.start()
        source.register_models()
        started = time.perf_counter()
        source.run_client(POPULATE, str(args.large), str(args.small), timeout=3600)
        made = time.perf_counter() - started
        objects = args.large + args.small + args.small // 1000
        print(f"source: 2 kv backends, {args.large} x 1 MiB + {args.small} x 1 KiB objects "
              f"({objects:,} objects) made in {made:.0f} s; load average {os.getloadavg()[0]:.2f}; "
              f"{os.cpu_count()} CPUs; snapshots and copies in {work}")
        cp, export, check, load = [], [], [], []
        snapshot_bytes = pool_bytes = 0
        for round_ in range(args.rounds):
            seconds, pool_bytes = copy_pools(source.pools, work / f"cp-{round_}")
            cp.append(seconds)
            shutil.rmtree(work / f"cp-{round_}")
            snap = work / f"snap-{round_}"
            export.append(timed([DATACLAY, "export", str(snap)], source.env))
            snapshot_bytes = sum(p.stat().st_size for p in snap.iterdir())
            from dataclay._internal.cli.snapshot import snapshot_signing as signing
            from dataclay._internal.cli.snapshot.snapshot_reader import read_snapshot
            public = source.home / signing.PUBLIC_FILE
            started = time.perf_counter()
            read_snapshot(str(snap), signing.trusted_keys(source.home / signing.KEY_FILE, []), progress=False).close()
            check.append(time.perf_counter() - started)
            target = Cluster(backends=2, store="kv", store_size=args.pool)
            targets.append(target)
            target.start()
            target.register_models()
            # a whole cluster into a new one: its administrator and their dataset exist there already
            load.append(timed([DATACLAY, "import", str(snap), "--trust", str(public),
                               "--allow", "existing-accounts,objects-in-existing-datasets"], target.env))
            target.stop()
            shutil.rmtree(snap)
            print(f"round {round_ + 1}: cp {cp[-1]:.2f} s, export {export[-1]:.2f} s, check {check[-1]:.2f} s, "
                  f"import {load[-1]:.2f} s; load average {os.getloadavg()[0]:.2f}", flush=True)
        print(f"\nsnapshot {snapshot_bytes / 1e6:,.0f} MB, pools {pool_bytes / 1e6:,.0f} MB; "
              f"median (min-max) over {args.rounds} rounds:")
        report("cp -r of the pools + sync", cp, pool_bytes, None)
        report("dataclay export", export, snapshot_bytes, objects, cp)
        report("check (import phase 1)", check, snapshot_bytes, objects)
        report("dataclay import", load, snapshot_bytes, objects, cp)
    finally:
        source.stop()
        for target in targets:
            target.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "tests" / "models"))
    sys.exit(main())
