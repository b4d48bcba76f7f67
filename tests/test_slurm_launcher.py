"""`dataclay slurm` against a real Slurm: Debian's slurmctld and one slurmd per namespace host, jobs
submitted with sbatch, servers started with srun. A job gets a cluster on its nodes, runs a client,
stops it and leaves no pool, also when its program fails, when it is cancelled, when its time limit
comes, and, through the shipped Epilog, when it is killed with SIGKILL."""
import json
import os
import pathlib
import re
import stat
import subprocess
import sys
import textwrap

import pytest

from harness.cluster import MODELS, REPO
from harness.hosts import unavailable as hosts_unavailable
from harness.slurm import job_pools, kill_dataclay, server_processes, slurm_on_hosts, unavailable as slurm_unavailable
from harness.waiting import wait_until

BIN = pathlib.Path(sys.executable).parent
TEMPLATE = REPO / "examples" / "slurm" / "dataclay-job.sbatch"
NODES = ["node1", "node2", "node3", "node4"]

# Makes an object on every backend, calls a method on each, reads one back by alias, looks for the
# job's secrets in every process's command line and environment, and for anything in the job's
# directories that is not its user's directory 0700 or file 0600, while the cluster runs.
CLIENT = textwrap.dedent("""
    import json, os, pathlib
    from dataclay import api
    api.init()
    from people.model import Person
    backends = api.get_backends()
    made = {}
    for backend_id, info in sorted(backends.items(), key=lambda kv: kv[1].host):
        p = Person(info.host, 30)
        p.make_persistent(alias="p-" + info.host, backend_id=backend_id)
        made[info.host] = [p.birthday(), backends[p.get_location()].host]
    home = pathlib.Path(os.environ["DATACLAY_HOME"])
    secrets = [line.split("=", 1)[1].encode() for line in (home / "client.properties").read_text().splitlines()
               if line.startswith("DATACLAY_PASSWORD=")] + [(home / "cluster.secret").read_bytes().strip()]
    exposed = []
    for proc in pathlib.Path("/proc").glob("[0-9]*"):
        for part in ("cmdline", "environ"):
            try:
                data = (proc / part).read_bytes()
            except OSError:
                continue
            if any(s in data for s in secrets):
                exposed.append(proc.name + "/" + part + ": " + (proc / "cmdline").read_bytes()[:80].decode(errors="replace"))
    loose = []
    for root in [home, *pathlib.Path("/dev/shm").glob("dataclay-job" + os.environ["SLURM_JOB_ID"] + "-*")]:
        for path in [root, *root.rglob("*")]:
            try:
                st = path.lstat()
            except FileNotFoundError:
                continue
            if st.st_uid != os.geteuid() or st.st_mode & 0o7777 != (0o700 if path.is_dir() else 0o600):
                loose.append(str(path) + " " + oct(st.st_mode))
    print("RESULT " + json.dumps({"made": made, "alias": Person.get_by_alias("p-node2").name, "exposed": exposed,
                                  "mode": oct((home / "client.properties").stat().st_mode & 0o777),
                                  "loose": loose}))
    api.finish()
""")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """A Slurm on namespace hosts node1..node4, shared by this module's jobs."""
    reason = hosts_unavailable() or slurm_unavailable()
    if reason:
        pytest.skip(f"Slurm test: {reason}")
    with slurm_on_hosts(NODES) as cluster:
        cluster.shared.mkdir(exist_ok=True)
        (cluster.shared / "client.py").write_text(CLIENT)
        yield cluster


def job_env(slurm) -> dict:
    """What jobs inherit: the virtualenv's commands, the test models, the jobs' directory, small pools,
    and a DATACLAY_HOME of the user's (where the snapshot signing key is kept from job to job)."""
    return slurm.env({"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(MODELS),
                      "DATACLAY_SLURM_DIR": str(slurm.shared / "jobs"), "DATACLAY_STORE_SIZE": "64M",
                      "DATACLAY_HOME": str(slurm.shared / "home")})


def result(output: pathlib.Path) -> dict:
    text = output.read_text()
    found = re.search(r"^RESULT (.*)$", text, re.M)
    assert found, f"the client printed no result:\n{text}"
    return json.loads(found.group(1))


def done_records(slurm, job_id: int) -> dict:
    """What each server's node recorded when it ended (steps/<name>.done)."""
    steps = slurm.shared / "jobs" / str(job_id) / "steps"
    return {p.stem: json.loads(p.read_text()) for p in steps.glob("*.done")}


def wait_for(path: pathlib.Path, slurm, job_id: int, timeout: float = 120) -> None:
    """Waits until `path` exists, failing at once if the job ends first."""
    def appeared() -> bool:
        if path.exists():
            return True
        info = slurm.job(job_id)
        assert info.state in ("PENDING", "RUNNING", "CONFIGURING"), f"job ended early: {info}"
        return False
    wait_until(appeared, timeout, f"{path} to appear", interval=0.2, details=slurm.log_tail)


def sleeping_job(slurm, name: str) -> tuple[int, pathlib.Path]:
    """Submits a two-node job whose `dataclay slurm run` application sleeps ten minutes; (its ID, its
    output file) once that application runs, its cluster up."""
    marker = slurm.shared / f"{name}.up"
    body = f"dataclay slurm run --pool-size 64M -- sh -c 'touch {marker}; sleep 600'\n"
    job_id, output = slurm.submit(body, "--nodes=2", env=job_env(slurm))
    wait_for(marker, slurm, job_id)
    return job_id, output


def wait_for_epilog(slurm, job_id: int, nodes: int = 1) -> list[str]:
    """The Epilog's lines for the job once `nodes` nodes have written theirs."""
    def written() -> list[str]:
        lines = slurm.epilog_lines(job_id)
        return lines if len(lines) >= nodes else []
    return wait_until(written, 30, f"the Epilog of job {job_id} on {nodes} node(s)", interval=0.2,
                      details=lambda: f"its lines: {slurm.epilog_lines(job_id)}")


def assert_no_leftovers(slurm, job_id: int) -> None:
    """No pool, no server process, no credential of the job is left, and the Epilog had nothing to do."""
    assert job_pools(job_id) == []
    # Slurm reports a cancelled job before its processes have exited: the launcher may still be on
    # its way out, its records written, within Slurm's KillWait (30 s)
    wait_until(lambda: server_processes(slurm.network) == [], 35, "the job's dataClay processes to exit",
               interval=0.2, details=lambda: "\n".join(server_processes(slurm.network)))
    job_dir = slurm.shared / "jobs" / str(job_id)
    assert sorted(p.name for p in job_dir.iterdir() if p.is_file()) == ["job.json", "lm.port"]
    for path in [job_dir, *job_dir.rglob("*")]:  # logs and records stay: the job's user's alone
        assert stat.S_IMODE(path.lstat().st_mode) == (0o700 if path.is_dir() else 0o600), path
    epilog = wait_for_epilog(slurm, job_id)
    assert all("nothing left" in line for line in epilog), epilog


def test_a_job_on_two_hosts_gets_a_cluster_runs_a_client_and_leaves_no_pool(slurm):
    # setup
    body = textwrap.dedent(f"""
        dataclay slurm run --pool-size 64M --warm-up 200 -- sh -c 'echo "SRUN $(srun --nodes=2 --ntasks=2 hostname | sort | xargs)" &&
          dataclaycmd NewModel admin - tests {MODELS} python >/dev/null && python {slurm.shared}/client.py &&
          for p in $(pgrep -f dataservice.jar); do case $(readlink /proc/$p/cwd) in
            *job$SLURM_JOB_ID-*/backend) echo "CPUS $(grep Cpus_allowed_list /proc/$p/status | cut -f2)";; esac; done'
        code=$?
        echo "LEFT $(ls -d /dev/shm/dataclay-job$SLURM_JOB_ID-* 2>/dev/null | wc -l)"
        exit $code
    """)
    # run
    job_id, output = slurm.submit(body, "--nodes=2", env={**job_env(slurm), "DATACLAY_CPUS": "0"})
    info = slurm.wait(job_id)
    # verify
    assert (info.state, info.exit_code) == ("COMPLETED", 0), output.read_text()
    assert re.findall(r"^CPUS (.*)$", output.read_text(), re.M) == ["0", "0"]  # each node's backend, placed
    out = result(output)
    assert out["made"] == {"node1": [31, "node1"], "node2": [31, "node2"]}
    assert out["alias"] == "node2"
    assert out["mode"] == "0o600"
    assert out["loose"] == [], "files of the job that are not its user's alone"
    assert out["exposed"] == [], "a secret is on a command line or in an environment"
    assert "SRUN node1 node2" in output.read_text()  # the job's own steps run beside the servers'
    # the program started once both backends were warmed up, and nothing of that was left
    assert re.search(r"warmed up in [\d.]+ s: 200 calls on each of 2 backend\(s\), then [\d.]+ s for the JIT to finish; "
                     r"its model and 2 object\(s\) removed$",
                     output.read_text(), re.M), output.read_text()
    assert "LEFT 0" in output.read_text()  # erased by the launcher before the job ended
    assert {name: r["stopped"] for name, r in done_records(slurm, job_id).items()} == {
        "logicmodule": True, "backend-node1": True, "backend-node2": True}
    assert_no_leftovers(slurm, job_id)


def test_a_failing_program_still_stops_the_cluster_and_erases_its_pool(slurm):
    # setup: the shipped sbatch template, PROGRAM as its arguments
    failing = "from dataclay import api; api.init(); print('RESULT {}'); raise SystemExit(7)"
    # run
    job_id, output = slurm.submit(TEMPLATE, "--nodes=1", env=job_env(slurm), args=("python", "-c", failing))
    info = slurm.wait(job_id)
    # verify
    assert (info.state, info.exit_code) == ("FAILED", 7), output.read_text()
    assert result(output) == {}
    assert set(done_records(slurm, job_id)) == {"logicmodule", "backend-node1"}
    assert_no_leftovers(slurm, job_id)


def test_scancel_of_a_running_job_stops_its_cluster_and_erases_its_pools(slurm):
    # setup
    job_id, output = sleeping_job(slurm, "cancel-me")
    assert len(job_pools(job_id)) == 2
    # run
    slurm.scancel(job_id)
    info = slurm.wait(job_id, timeout=90)
    # verify
    assert info.state == "CANCELLED"
    records = done_records(slurm, job_id)
    assert set(records) == {"logicmodule", "backend-node1", "backend-node2"}, output.read_text()
    for name in ("backend-node1", "backend-node2"):
        assert any("pool directory" in line and "overwritten with zeros" in line for line in records[name]["erased"]), \
            (records, output.read_text())
    assert_no_leftovers(slurm, job_id)


def test_a_node_signalled_again_while_it_erases_its_pool_still_erases_all_of_it(slurm):
    # setup: a cancelled job's servers get SIGTERM from Slurm and again from the job's launcher, which
    # stops them too; this has the second one come while the node erases, as it may on a loaded node
    job_id, output = sleeping_job(slurm, "signal-twice")
    steps = slurm.shared / "jobs" / str(job_id) / "steps"
    step = json.loads((steps / "backend-node2.step").read_text())
    # run: as the launcher does (this Slurm signals the step, yet scancel exits 225, "Invalid job id")
    signal_step = ["scancel", "--signal=TERM", f"{job_id}.{step['step']}"]
    slurm.run(signal_step, check=False)
    eraser = wait_until(lambda: eraser_of(step["pid"]), 60, "the node's store eraser to start", interval=0.005)
    slurm.run(signal_step, check=False)
    wait_until(lambda: (steps / "backend-node2.done").exists(), 60, "the node to record its end", interval=0.1)
    # verify
    record = json.loads((steps / "backend-node2.done").read_text())
    assert record["failures"] == [], record
    assert any("pool directory" in line and "overwritten with zeros" in line for line in record["erased"]), record
    assert not pathlib.Path(f"/proc/{eraser}").exists()
    # and node1, still stopping when node2 (done already) runs its Epilog, erases its own pool too
    slurm.scancel(job_id)
    slurm.wait(job_id, timeout=90)
    records = done_records(slurm, job_id)
    assert any("pool directory" in line for line in records["backend-node1"]["erased"]), (records, output.read_text())
    assert_no_leftovers(slurm, job_id)


def eraser_of(pid: int) -> int | None:
    """The pid of the store eraser (StoreEraseMain) that process `pid` runs, if it runs one now."""
    for task in pathlib.Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in children:
            try:
                if b"StoreEraseMain" in pathlib.Path(f"/proc/{child}/cmdline").read_bytes():
                    return int(child)
            except OSError:
                continue
    return None


def test_a_job_warned_of_its_time_limit_stops_its_cluster_cleanly_before_it(slurm):
    # setup: the template's `exec`, and its warning (#SBATCH --signal=B:USR1@120) sent by the test
    # once the cluster is up: Slurm may send it up to a minute early, so a limit short enough for a
    # test could have it arrive before the launcher has started (5 minutes: Slurm sends none here)
    assert "#SBATCH --signal=B:USR1@120" in TEMPLATE.read_text()
    marker = slurm.shared / "time-limit.up"
    job_id, output = slurm.submit(TEMPLATE, "--nodes=1", "--time=5", env=job_env(slurm),
                                  args=("sh", "-c", f"touch {marker}; sleep 600"))
    wait_for(marker, slurm, job_id)
    # run
    slurm.scancel(job_id, "--batch", "--signal=USR1")
    info = slurm.wait(job_id, timeout=150)
    # verify
    text = output.read_text()
    assert "received SIGUSR1: the job's time limit is near" in text, text
    assert info.state != "TIMEOUT", text  # it ended before the limit, having stopped everything
    assert all(r["stopped"] and r["failures"] == [] for r in done_records(slurm, job_id).values())
    assert_no_leftovers(slurm, job_id)


def test_the_epilog_erases_the_pools_of_a_job_killed_with_sigkill(slurm):
    # setup
    job_id, output = sleeping_job(slurm, "kill-me")
    pools = job_pools(job_id)
    assert len(pools) == 2
    # run: as the OOM killer or a crash would, all at once: nothing of the job can clean up
    assert kill_dataclay(slurm.network) >= 6  # launcher, 3 node wrappers, 3 JVMs, 2 execution environments
    slurm.wait(job_id, timeout=90)
    # verify
    erased = " ".join(wait_for_epilog(slurm, job_id, nodes=2))
    assert all(f"erased {pool}" in erased for pool in pools), erased
    assert job_pools(job_id) == []
    assert server_processes(slurm.network) == []


def test_a_directory_another_user_made_under_a_jobs_name_is_never_used_and_the_epilog_erases_it(slurm):
    # setup: the job is held while a stranger makes the directory releases before 21 would have
    # used on node1 (the job's ID and node names are no secret), with a file in it
    job_id, output = slurm.submit("dataclay slurm run --pool-size 64M -- true\n", "--nodes=1", "--nodelist=node1",
                                  "--hold", env=job_env(slurm))
    planted = pathlib.Path(f"/dev/shm/dataclay-job{job_id}-node1")
    planted.mkdir()
    (planted / "pool").write_text("the stranger's")
    for path in (planted, planted / "pool"):
        os.chown(path, 54321, 54321)
    planted.chmod(0o777)
    # run
    slurm.run(["scontrol", "release", str(job_id)])
    info = slurm.wait(job_id)
    # verify: the job ran in a directory of its own, never touched the planted one, and the Epilog
    # erased both anyway (its own was already gone)
    assert (info.state, info.exit_code) == ("COMPLETED", 0), output.read_text()
    epilog = wait_for_epilog(slurm, job_id)
    assert any(f"erased {planted} (owned by uid 54321, not the job's user" in line for line in epilog), epilog
    assert job_pools(job_id) == []
    assert server_processes(slurm.network) == []


def test_outside_an_allocation_and_with_a_foreign_node_it_says_what_is_wrong(slurm):
    # run
    env = {k: v for k, v in job_env(slurm).items() if not k.startswith("SLURM_JOB")}
    outside = subprocess.run([str(BIN / "dataclay"), "slurm", "run", "--", "true"], env=env, capture_output=True,
                             text=True, timeout=60)
    inside = subprocess.run([str(BIN / "dataclay"), "slurm", "start", "--backend-nodes", "node1 node9"],
                            env={**env, "SLURM_JOB_ID": "1", "SLURM_JOB_NODELIST": "node[1-2]"},
                            capture_output=True, text=True, timeout=60)
    no_program = subprocess.run([str(BIN / "dataclay"), "slurm", "run", "--store", "kv"],
                                env={**env, "SLURM_JOB_ID": "1", "SLURM_JOB_NODELIST": "node1"},
                                capture_output=True, text=True, timeout=60)
    # verify
    assert outside.returncode == 2 and "runs inside a Slurm allocation" in outside.stderr
    assert inside.returncode == 2 and "node9 not in this job's nodes (node1, node2)" in inside.stderr
    assert no_program.returncode == 2 and "no program to run" in no_program.stderr


def test_a_job_exports_its_objects_at_the_end_and_a_later_job_imports_them_at_start(slurm):
    # setup
    probe = subprocess.run([str(BIN / "dataclay"), "export", "--help"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip("`dataclay export` / `dataclay import` (issue 16, part 5) are not on this branch yet")
    snapshot = slurm.shared / "snapshot"
    program = slurm.shared / "kept.py"
    program.write_text(textwrap.dedent("""
        import json, sys
        from dataclay import api
        api.init()
        from people.model import Person
        if sys.argv[1] == "make":
            p = Person("kept", 50)
            p.make_persistent(alias="kept")
        else:
            p = Person.get_by_alias("kept")
        print("RESULT " + json.dumps({"age": p.birthday()}))
        api.finish()
    """))
    first = (f"dataclay slurm run --pool-size 64M --export {snapshot} -- sh -c "
             f"'dataclaycmd NewModel admin - tests {MODELS} python >/dev/null && python {program} make'\n")
    # the second job's cluster already has its administrator (and their dataset); the model is new there
    second = (f"dataclay slurm run --pool-size 64M --import {snapshot} "
              f"--import-allow existing-accounts,objects-in-existing-datasets,models -- python {program} read\n")
    # run: two backends, then one
    job_1, output_1 = slurm.submit(first, "--nodes=2", env=job_env(slurm))
    info_1 = slurm.wait(job_1)
    job_2, output_2 = slurm.submit(second, "--nodes=1", env=job_env(slurm))
    info_2 = slurm.wait(job_2)
    # verify
    assert (info_1.state, result(output_1)) == ("COMPLETED", {"age": 51}), output_1.read_text()
    assert (info_2.state, result(output_2)) == ("COMPLETED", {"age": 52}), output_2.read_text()
    assert snapshot.is_dir() and (snapshot / "signature.json").exists()
    assert (slurm.shared / "home" / "snapshot-signing.key").stat().st_mode & 0o777 == 0o600
    assert_no_leftovers(slurm, job_1)
    assert_no_leftovers(slurm, job_2)
