"""DATACLAY_CPUS places each backend: its Data Service, every thread of it, and the execution
environments it starts run on the CPUs it names; a value that names CPUs out of reach stops
`dataclay start` before anything starts."""
from __future__ import annotations

import os
import pathlib

from harness.cluster import Cluster
from test_core_acceptance import client


def _cpus_of(pid: int) -> tuple[set[str], int]:
    """The CPU lists every thread of `pid` and of its descendants may run on, and how many processes those are."""
    lists, pending, processes = set(), [pid], 0
    while pending:
        process = pending.pop()
        processes += 1
        for task in pathlib.Path(f"/proc/{process}/task").iterdir():
            try:
                status = (task / "status").read_text()
                pending += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue  # a thread or process that just ended
            lists |= {line.split(":")[1].strip() for line in status.splitlines()
                      if line.startswith("Cpus_allowed_list:")}
    return lists, processes


def test_each_backend_and_its_environments_run_on_the_cpus_dataclay_cpus_gives_it(make_cluster):
    # setup: backend 1 on the first CPU this process may use, backend 2 on the last
    allowed = sorted(os.sched_getaffinity(0))
    first, last = str(allowed[0]), str(allowed[-1])
    cluster = make_cluster(backends=2, extra_env={"DATACLAY_CPUS": f"{first};{last}"})

    # run: a method call on each backend starts its execution environment
    client(cluster, """
        for b in sorted(api.get_backends()):
            c = Counter(0)
            c.make_persistent(backend_id=b)
            c.increment()
        print(json.dumps({}))
    """)

    # verify: every thread of each Data Service and of the environment it started is on its CPU;
    # the Logic Module, and the launcher's other starts, kept the CPUs they had
    pids = cluster.pids()
    for name, cpu in (("backend-1", first), ("backend-2", last)):
        lists, processes = _cpus_of(pids[name])
        assert lists == {cpu}, name
        assert processes > 1, f"{name} started no execution environment"
    assert _cpus_of(pids["logicmodule"])[0] == {_own_list()}


def _own_list() -> str:
    return next(line.split(":")[1].strip() for line in pathlib.Path("/proc/self/status").read_text().splitlines()
                if line.startswith("Cpus_allowed_list:"))


def test_cpus_out_of_reach_or_malformed_stop_start_before_anything_starts():
    for value, said in (("4095", "may not use 4095"), ("0-a", "must be numa, or CPU lists")):
        cluster = Cluster(backends=1, extra_env={"DATACLAY_CPUS": value})
        try:
            # run
            result = cluster.dataclay("start")
            # verify
            assert result.returncode != 0, result.stdout
            assert "DATACLAY_CPUS" in result.stderr and said in result.stderr, result.stderr
            assert cluster.pids() == {}
        finally:
            cluster.stop()


def test_a_restart_checks_the_cpus_of_every_backend_the_cluster_has_before_it_starts_any():
    # setup: a stopped two-backend cluster
    cluster = Cluster(backends=2)
    try:
        cluster.start()
        cluster.stop_processes()
        cluster.env["DATACLAY_CPUS"] = f"{min(os.sched_getaffinity(0))};4095"

        # run: a start that names no backend count restarts both
        result = cluster.dataclay("start")

        # verify: backend 2's CPUs are out of reach, and nothing was started
        assert result.returncode != 0, result.stdout
        assert "backend 2 the CPU list 4095" in result.stderr, result.stderr
        assert cluster.pids() == {}
    finally:
        cluster.stop()
