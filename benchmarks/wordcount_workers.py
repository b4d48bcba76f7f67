#!/usr/bin/env python
"""The COMPSs-style wordcount (examples/wordcount) with 1, 2 and 4 worker processes of the local
COMPSs stand-in on one two-backend `kv` cluster, against the sequential run (the same tasks one
after another in the client process). Texts are generated once and spread round robin over the
backends; each run is a fresh client process, runs are interleaved round by round so that the
machine's drift hits every configuration alike, and every run must find the same top words.
Reported: the task phase (count_words: tasks, merges on versions, consolidation at the barrier)
and the whole process (also Python start-up, the session and starting the worker processes)."""
import argparse
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from _cluster import REPO, Cluster

EXAMPLE = REPO / "examples" / "wordcount"

FINISHED = re.compile(r"# WordCount finished in ([0-9.]+) s")


def run_wordcount(env: dict, workers: int) -> tuple[float, float, str]:
    """One run: (task phase s, whole process s, the top-10 line)."""
    start = time.perf_counter()
    result = subprocess.run([sys.executable, str(EXAMPLE / "wordcount.py"), "Words", "--workers", str(workers)],
                            env=env, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"wordcount --workers {workers} failed:\n{result.stdout}\n{result.stderr}")
    phase = float(FINISHED.search(result.stdout).group(1))
    return phase, wall, result.stdout.split("# Top 10:\n", 1)[1].strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--texts", type=int, default=16)
    parser.add_argument("--size", default="1M", help="size of each text (prepare.py syntax: 256K, 1M, ...)")
    parser.add_argument("--rounds", type=int, default=3, help="runs per configuration (median and max reported)")
    parser.add_argument("--workers", default="0,1,2,4", help="worker counts; 0 is the sequential run")
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",") if w]
    if any(w < 0 for w in counts) or args.rounds < 1:
        parser.error("worker counts must be 0 or more and --rounds at least 1")

    work = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-wordcount-workers-"))
    cluster = Cluster(backends=2, store="kv", store_size="1G")
    try:
        cluster.start()
        cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "wordcount", str(EXAMPLE / "model"), "python")
        cluster.dataclaycmd("GetStubs", cluster.admin_user(), "-", "wordcount", str(work / "stubs"))
        env = dict(cluster.env, PYTHONPATH=f"{work / 'stubs'}:{cluster.env['PYTHONPATH']}")
        prepared = subprocess.run([sys.executable, str(EXAMPLE / "prepare.py"), "--texts", str(args.texts),
                                   "--size", args.size], env=env, capture_output=True, text=True, timeout=900)
        if prepared.returncode != 0:
            raise RuntimeError(f"prepare.py failed:\n{prepared.stdout}\n{prepared.stderr}")
        print(f"{args.texts} texts of {args.size}B on 2 kv backends, {args.rounds} round(s), "
              f"load average {os.getloadavg()[0]:.1f} at start")
        samples = {w: [] for w in counts}
        tops = set()
        for _ in range(args.rounds):
            for workers in counts:
                phase, wall, top = run_wordcount(env, workers)
                samples[workers].append((phase, wall))
                tops.add(top)
        if len(tops) != 1:
            raise RuntimeError(f"runs disagree on the top words: {tops}")
        baseline = 1 if 1 in counts else counts[0]
        base = statistics.median(p for p, _ in samples[baseline])
        print(f"{'run':<22}{'tasks median s':>15}{'max s':>8}{'process median s':>18}{'speed-up':>10}")
        for workers in counts:
            phases = [p for p, _ in samples[workers]]
            walls = [w for _, w in samples[workers]]
            name = "sequential" if workers == 0 else f"{workers} worker process{'es' if workers > 1 else ''}"
            print(f"{name:<22}{statistics.median(phases):>15.3f}{max(phases):>8.3f}"
                  f"{statistics.median(walls):>18.3f}{base / statistics.median(phases):>9.2f}x")
        print(f"load average {os.getloadavg()[0]:.1f} at end; speed-up: task phase against {baseline} worker(s)")
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
