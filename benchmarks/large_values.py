#!/usr/bin/env python
"""What reading one large value back costs the Data Service's memory (issue 21: "Reading a 200 MB
value back raised the Data Service from 603 to 1,831 MB"), for this tree's build and, with
--baseline-jars, for another build (e.g. the one before the change) in the same run.

Per build: a one-backend `kv` cluster; a client stores a Counter whose `value` is MB bytes; the
cluster is stopped cleanly and started again, so the write's memory is gone; then the Data
Service's resident memory is read, a fresh client reads the value back, and the Data Service's
resident memory (now, and its peak) and its execution environments' (summed over their processes)
are read again.

Usage: benchmarks/large_values.py [--mb 200] [--baseline-jars DIR]"""
from __future__ import annotations

import argparse
import json
import pathlib
import textwrap

from _cluster import Cluster
from _cpu_time import descendants

WRITE = textwrap.dedent("""
    import sys
    from dataclay import api
    api.init()
    from people.model import Counter
    c = Counter(0)
    c.value = b"x" * (int(sys.argv[1]) << 20)
    c.make_persistent(alias="big")
    api.finish()
""")

READ = textwrap.dedent("""
    import sys
    from dataclay import api
    api.init()
    from people.model import Counter
    assert len(Counter.get_by_alias("big").value) == int(sys.argv[1]) << 20
    api.finish()
""")


def _status(pid: int, key: str) -> int:
    """A /proc/<pid>/status figure in MiB (VmRSS, VmHWM)."""
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) // 1024
    return 0


def measure(mb: int, jars: str | None) -> dict:
    """RSS figures of one build, in MiB."""
    cluster = Cluster(backends=1, store="kv", store_size=f"{max(1024, 3 * mb)}M",
                      extra_env={"DATACLAY_JARS": jars} if jars else None)
    try:
        cluster.start()
        cluster.register_models()
        cluster.run_client(WRITE, str(mb), timeout=600)
        cluster.stop_processes()
        cluster.start()
        ds = cluster.pids()["backend-1"]
        cluster.ee_pid("backend-1")  # the environment is started, so its start-up is not counted below
        before, peak_before = _status(ds, "VmRSS"), _status(ds, "VmHWM")
        ee_before = sum(_status(p, "VmRSS") for p in descendants(ds))
        cluster.run_client(READ, str(mb), timeout=600)
        return {"ds_before": before, "ds_peak_before": peak_before, "ds_after": _status(ds, "VmRSS"), "ds_peak": _status(ds, "VmHWM"),
                "ee_before": ee_before, "ee_after": sum(_status(p, "VmRSS") for p in descendants(ds))}
    finally:
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the value, in MiB")
    parser.add_argument("--baseline-jars", help="directory holding another build's logicmodule.jar and dataservice.jar")
    args = parser.parse_args()
    builds = {"this tree": None}
    if args.baseline_jars:
        builds = {"baseline": args.baseline_jars, **builds}
    results = {name: measure(args.mb, jars) for name, jars in builds.items()}
    print(f"reading back one {args.mb} MiB value (MiB of resident memory)")
    print(f"{'build':<12} {'DS before':>10} {'(peak)':>7} {'DS after':>9} {'DS peak':>8} {'DS growth':>10}"
          f" {'EE before':>10} {'EE after':>9}")
    for name, r in results.items():
        print(f"{name:<12} {r['ds_before']:>10} {r['ds_peak_before']:>7} {r['ds_after']:>9} {r['ds_peak']:>8}"
              f" {r['ds_peak'] - r['ds_before']:>10} {r['ee_before']:>10} {r['ee_after']:>9}")
    if "baseline" in results:
        base, new = results["baseline"], results["this tree"]
        ratio = (new["ds_peak"] - new["ds_before"]) / max(1, base["ds_peak"] - base["ds_before"])
        print(f"Data Service growth, this tree / baseline: {ratio:.2f}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
