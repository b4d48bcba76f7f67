#!/usr/bin/env python
"""Where the first calls after `dataclay start` go (issue 25's "just started" target): a fresh
one-backend cluster (`kv` on /dev/shm, DATACLAY_JAVA_OPTS and DATACLAY_CPUS from the caller), one
client making durable updates (`Counter.increment()`) from the first one on, in blocks of
--block calls. For each block: its p50 and p99, how many calls took over 3x the warm p50 (the
target's p99 bound), and the CPU each part spent per call meanwhile: the Data Service's threads
by kind (the JIT's compiler threads, GC, its network threads, the environment link, ...), the
execution environment and the client. After the blocks, --warm more calls, then --block calls
timed as the warm figure. So a slow start shows what it ran beside.

--warm-up N starts the cluster with `dataclay start`'s warm-up pass (DATACLAY_WARMUP=N): N calls on
a model and object of its own, removed before the start returns. --train N instead has another
client process of the measured client's account make N updates on a counter of its own once the
cluster is up. Either way the blocks show whether the servers' warm-up carries over to a new
client; the time it took is printed, as a start-up cost.

--slurm measures the same after `dataclay slurm run` starts a job's cluster instead: a real Slurm
(slurmctld, and one slurmd on a network-namespace host; the test harness's) runs a one-node job
whose program is this benchmark's client (--in-job), with `--warm-up N` passed to `dataclay slurm
run`. The figures start at the job's batch script; the Data Service is the job's."""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import shlex
import subprocess
import sys
import time

from _cluster import connected_cluster, models_importable, p50_p99
from _cpu_time import JVM_KINDS, cpu_by_thread_kind, descendants, snapshot, thread_cpu
from _timing import timed

# The training client: its own process and counter, so the measured client starts as a new one would.
TRAINING = """
import sys
from dataclay import api
api.init()
from people.model import Counter
counter = Counter(0)
counter.make_persistent()
for _ in range(int(sys.argv[1])):
    counter.increment()
api.finish()
"""


def train(calls: int) -> float:
    """Seconds a new client process took to make `calls` durable updates (this process's cluster)."""
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", TRAINING, str(calls)], env=os.environ, check=True)
    return time.perf_counter() - began


def measure(counter, backend: int, args) -> tuple[list, float, float]:
    """The timed blocks (samples, CPU split) from the first call on, then the warm p50 and p99."""
    processes = {"environment": descendants(backend), "client": [os.getpid()]}
    blocks = []
    for _ in range(args.blocks):
        threads, others = thread_cpu(backend), snapshot(processes)
        samples = timed(counter.increment, args.block)
        split = cpu_by_thread_kind(threads, thread_cpu(backend))
        after = snapshot(processes)
        split.update({kind: after[kind] - others[kind] for kind in processes})
        blocks.append((samples, split))
    timed(counter.increment, args.warm)
    warm_p50, warm_p99 = p50_p99(timed(counter.increment, args.block))
    return blocks, warm_p50, warm_p99


def report(blocks: list, warm_p50: float, warm_p99: float, args) -> None:
    print(f"warm (after {args.blocks * args.block + args.warm} calls): p50 {warm_p50 * 1e6:.0f} us,"
          f" p99 {warm_p99 * 1e6:.0f} us")
    kinds = [*JVM_KINDS, "environment", "client"]
    names = [f"DS {k}" if k in JVM_KINDS else k for k in kinds]
    print(f"{'calls':<13} {'p50 us':>7} {'p99 us':>7} {'> 3x warm':>9} | CPU us per call: "
          + " ".join(f"{name:>{max(8, len(name))}}" for name in names))
    first = []
    for number, (samples, split) in enumerate(blocks):
        first += samples
        p50, p99 = p50_p99(samples)
        slow = sum(s > 3 * warm_p50 for s in samples)
        cells = " ".join(f"{split[k] / len(samples) * 1e6:>{max(8, len(name))}.0f}" for k, name in zip(kinds, names))
        calls = f"{number * args.block}-{(number + 1) * args.block - 1}"
        print(f"{calls:<13} {p50 * 1e6:>7.0f} {p99 * 1e6:>7.0f} {slow:>9} | {'':16}{cells}")
    p50, p99 = p50_p99(first)
    print(f"first {len(first)} calls: p50 {p50 * 1e6:.0f} us (x{p50 / warm_p50:.2f} of warm; target <= 1.3),"
          f" p99 {p99 * 1e6:.0f} us (x{p99 / warm_p50:.2f} of the warm p50; target <= 3.0)")


def local(args) -> None:
    """The blocks on a cluster `dataclay start` started here."""
    if args.warm_up:
        os.environ["DATACLAY_WARMUP"] = str(args.warm_up)
    models_importable()
    began = time.perf_counter()
    with connected_cluster(backends=1, store="kv", store_size="1G") as cluster:
        print(f"dataclay start{' with its warm-up' if args.warm_up else ''}: {cluster.start_seconds:.2f} s", flush=True)
        print("".join(f"  {line}\n" for line in cluster.start_output.splitlines() if "warm" in line), end="")
        if args.train:
            print(f"training: {args.train} updates by another client took {train(args.train):.2f} s", flush=True)
        from people.model import Counter
        counter = Counter(0)
        counter.make_persistent()
        counter.increment()  # the account's environment starts here
        print(f"start{' and training' if args.train else ''} to the first update answered:"
              f" {time.perf_counter() - began:.2f} s", flush=True)
        measured = measure(counter, cluster.pids()["backend-1"], args)
    report(*measured, args)


# The job: `dataclay slurm run` with the warm-up and the test models, then this benchmark as its program.
JOB = """BATCH=$(date +%s.%N)
dataclay slurm run --pool-size 1G --warm-up {warm_up} --model tests:python:{models} -- \\
  python {bench} --in-job --since "$BATCH" --blocks {blocks} --block {block} --warm {warm}
"""


def in_slurm(args) -> None:
    """The blocks on a Slurm job's cluster (this process submits the job and prints what it printed)."""
    from harness.slurm import slurm_on_hosts
    from _cluster import REPO, SHIPPED

    models = REPO / "tests" / "models"
    body = JOB.format(warm_up=args.warm_up, models=shlex.quote(str(models)),
                      bench=shlex.quote(str(pathlib.Path(__file__).resolve())), blocks=args.blocks, block=args.block,
                      warm=args.warm)
    with slurm_on_hosts(["node1"]) as slurm:
        env = slurm.env({"PATH": f"{pathlib.Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                         "PYTHONPATH": f"{models}{os.pathsep}{pathlib.Path(__file__).parent}",
                         "DATACLAY_SLURM_DIR": str(slurm.shared / "jobs"), "DATACLAY_HOME": str(slurm.shared / "home"),
                         "DATACLAY_STORE": "kv", **SHIPPED})
        job_id, output = slurm.submit(body, "--nodes=1", env=env)
        info = slurm.wait(job_id, timeout=args.job_timeout)
        text = output.read_text()
    if info.state != "COMPLETED":
        raise SystemExit(f"job {job_id} failed ({info.state}):\n{text}")
    print(text, end="")


def job_client(args) -> None:
    """This benchmark as a job's program: the job's cluster, its one backend's Data Service measured."""
    up = time.time()
    from dataclay import api
    api.init()
    from people.model import Counter
    counter = Counter(0)
    counter.make_persistent()
    counter.increment()
    print(f"batch script to the program's start (`dataclay slurm run`, its warm-up included): {up - args.since:.2f} s")
    print(f"batch script to the first update answered: {time.time() - args.since:.2f} s", flush=True)
    measured = measure(counter, _job_backend(), args)
    api.finish()
    report(*measured, args)


def _job_backend() -> int:
    """The pid of this job's Data Service (its working directory is the job's backend directory)."""
    job = os.environ["SLURM_JOB_ID"]
    for proc in pathlib.Path("/proc").glob("[0-9]*"):
        try:
            if b"dataservice.jar" in (proc / "cmdline").read_bytes() and \
                    re.search(rf"job{job}-[^/]*/backend$", os.readlink(proc / "cwd")):
                return int(proc.name)
        except OSError:
            continue
    raise SystemExit(f"no Data Service of job {job} found")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--blocks", type=int, default=10, help="blocks of calls timed from the start")
    parser.add_argument("--block", type=int, default=2000, help="calls per block")
    parser.add_argument("--warm", type=int, default=60000, help="unmeasured calls between the blocks and the warm figure")
    parser.add_argument("--train", type=int, default=0, help="updates another client makes before the blocks")
    parser.add_argument("--warm-up", type=int, default=0, help="calls of the start's warm-up pass")
    parser.add_argument("--slurm", action="store_true", help="a Slurm job's cluster (`dataclay slurm run`)")
    parser.add_argument("--job-timeout", type=float, default=600, help="seconds the --slurm job may take")
    parser.add_argument("--in-job", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--since", type=float, default=0.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if min(args.blocks, args.block) < 1 or min(args.warm, args.train, args.warm_up) < 0:
        parser.error("--blocks and --block must be at least 1, --warm, --train and --warm-up at least 0")
    if args.slurm and args.train:
        parser.error("--train is for a local cluster; a job's cluster takes --warm-up")
    if args.in_job:
        job_client(args)
    elif args.slurm:
        in_slurm(args)
    else:
        local(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
