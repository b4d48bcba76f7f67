#!/usr/bin/env python
"""How long a Slurm job takes to get its dataClay cluster up on 1, 2 and 4 hosts, against a local
`dataclay start` of the same number of backends measured in the same run.

A real Slurm (slurmctld and one slurmd per network-namespace host, the test harness's) runs the
jobs. Per round and host count N, a job `sbatch --nodes=N` runs `dataclay slurm run --pool-size
256M -- python -c 'print(time.time())'`: the figures are from sbatch to the program's first line
(scheduling and the batch script included), from the launcher's start to that line (the
launcher's own part: credentials, one srun step per server, the JVMs, registration), and from
the program's end to the end of `dataclay slurm run` (stopping every server and erasing every
pool). The baseline is `dataclay start --backends N` (kv, 256M pools) of a local cluster. All the
hosts share this machine's cores: on N real nodes the servers start in parallel."""
import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

from _cluster import Cluster
from harness.slurm import slurm_on_hosts

BIN = os.path.dirname(sys.executable)
PROGRAM = "import time; print('UP', time.time(), flush=True)"
JOB = f"""echo "BATCH $(date +%s.%N)"
dataclay slurm run --pool-size 256M -- python -c "{PROGRAM}"
echo "STOPPED $(date +%s.%N)"
"""


def one_job(slurm, nodes: int) -> tuple[float, float, float]:
    """(sbatch to cluster up, launcher start to cluster up, program end to cluster stopped and erased), s."""
    env = slurm.env({"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
                     "DATACLAY_SLURM_DIR": str(slurm.shared / "jobs")})
    submitted = time.time()
    job_id, output = slurm.submit(JOB, f"--nodes={nodes}", env=env)
    info = slurm.wait(job_id, timeout=300)
    text = output.read_text()
    marks = dict(re.findall(r"^(BATCH|UP|STOPPED) (\S+)$", text, re.M))
    if info.state != "COMPLETED" or set(marks) != {"BATCH", "UP", "STOPPED"}:
        raise RuntimeError(f"job {job_id} on {nodes} host(s) failed ({info.state}):\n{text}")
    up, batch, stopped = float(marks["UP"]), float(marks["BATCH"]), float(marks["STOPPED"])
    return up - submitted, up - batch, stopped - up


def one_local_start(backends: int) -> float:
    """Seconds of `dataclay start --backends N` on a fresh home (the harness's local cluster)."""
    cluster = Cluster(backends=backends, store="kv", store_size="256M")
    try:
        began = time.monotonic()
        cluster.start()
        return time.monotonic() - began
    finally:
        cluster.stop()


def spread(samples: list[float]) -> str:
    return f"{statistics.median(samples):6.2f} ({min(samples):.2f}-{max(samples):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hosts", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    if args.rounds < 1 or not args.hosts or min(args.hosts) < 1 or max(args.hosts) > 8:
        parser.error("--rounds must be at least 1 and --hosts between 1 and 8")
    version = subprocess.run([shutil.which("slurmd") or "/usr/sbin/slurmd", "-V"], capture_output=True, text=True)
    print(f"{platform.node()}: {os.cpu_count()} CPUs, {platform.platform()}, {(version.stdout or version.stderr).strip()}, "
          f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f} at start")
    jobs = {n: [] for n in args.hosts}
    local = {n: [] for n in args.hosts}
    with slurm_on_hosts([f"node{i + 1}" for i in range(max(args.hosts))]) as slurm:
        for _ in range(args.rounds):
            for n in args.hosts:
                jobs[n].append(one_job(slurm, n))
                local[n].append(one_local_start(n))
    print(f"{args.rounds} round(s), load average {os.getloadavg()[0]:.1f} at end; seconds, median (min-max)")
    print(f"{'hosts':<6}{'sbatch to up':>22}{'launcher to up':>22}{'stop and erase':>22}"
          f"{'local dataclay start':>24}{'launcher/local':>16}")
    for n in args.hosts:
        columns = [[r[i] for r in jobs[n]] for i in range(3)]
        ratio = statistics.median(columns[1]) / statistics.median(local[n])
        print(f"{n:<6}" + "".join(f"{spread(c):>22}" for c in columns) + f"{spread(local[n]):>24}{ratio:>15.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
