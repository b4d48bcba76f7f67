"""Starts and stops a Slurm job's dataClay cluster: the Logic Module on one node and a backend on
each chosen node, each one a Slurm step (`srun --overlap`, one task, `-w node`) running
`dataclay slurm node` there (see slurm_node.py), so the job's own steps can still use the nodes.

Start waits until the Logic Module answers and every backend is registered and alive, then writes
the client configuration. Stop signals each server's step (scancel --signal=TERM JOB.STEP, which
reaches every process of the step: the wrapper and its JVM stop cleanly) and waits until each node
has recorded that it erased its part; what a node that never reports left is the Epilog's
(scripts/slurm-epilog.sh) to erase when the job ends."""
from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys
import time

from dataclay.exceptions import DataClayException, NotAuthenticatedError
from dataclay._internal.cli.common import progress
from dataclay._internal.cli.slurm.slurm_job import JobDir, JobPlan
from dataclay._internal.private_paths import open_private
from dataclay._internal.rpc import LogicModuleClient

STOP_TIMEOUT = 60.0
# keys the servers must not inherit from whoever started the job: they get theirs from the job's files
PRIVATE_KEYS = ("DATACLAY_PASSWORD", "DATACLAY_NEW_PASSWORD", "DATACLAY_USER", "DATACLAY_HOST", "DATACLAY_PORT",
                "DATACLAY_HOME", "DATACLAY_DATASET", "DATACLAY_TLS_CA", "DATACLAY_TLS_CERT", "DATACLAY_TLS_KEY",
                "DATACLAY_CLUSTER_SECRET_FILE")


class SlurmStartError(DataClayException):
    """A server of the job's cluster did not come up; the message says which and why."""

    code = "INTERNAL"


def steps_env() -> dict[str, str]:
    """The environment of the server steps: this one without passwords, addresses or secrets."""
    return {k: v for k, v in os.environ.items() if k not in PRIVATE_KEYS}


class JobCluster:
    """The cluster of one job, whose files are in `job` (see slurm_job.JobDir)."""

    def __init__(self, job: JobDir):
        self.job = job
        self._sruns: dict[str, subprocess.Popen] = {}

    # ---- start -------------------------------------------------------------------------------

    def start(self, plan: JobPlan, timeout: float) -> list[pathlib.Path]:
        """Starts every server of `plan` and waits (up to `timeout` s) until all are up; returns the
        client files written. On failure whatever started is stopped before the error is raised."""
        self.job.create()
        self.job.make_credentials()
        self.job.save(plan)
        deadline = time.monotonic() + timeout
        try:
            self._srun("logicmodule", "logicmodule", plan.lm_node)
            port = self._await_port(deadline)
            for node in plan.backend_nodes:
                self._srun(f"backend-{node}", "backend", node)
            self._await_backends(plan, port, deadline)
            files = self.job.write_client_files(plan, port)
        except BaseException:
            self.stop(plan)
            raise
        plan.state = "running"
        self.job.save(plan)
        return files

    def _srun(self, name: str, role: str, node: str) -> None:
        log = self.job.logs / f"{name}.log"
        argv = ["srun", "--overlap", "--nodes=1", "--ntasks=1", f"--nodelist={node}", f"--job-name=dataclay-{name}",
                "--kill-on-bad-exit=0", "--input=none", f"--output={log}", "--unbuffered",
                sys.executable, "-m", "dataclay._internal.cli.slurm.slurm", "node", role, str(self.job.path)]
        # srun's --output keeps the mode of a file that is there: made 0600 now, as every file of the job
        os.close(open_private(log))
        with os.fdopen(open_private(self.job.logs / f"srun-{name}.log"), "ab") as srun_log:
            try:
                self._sruns[name] = subprocess.Popen(argv, env=steps_env(), stdin=subprocess.DEVNULL,
                                                     stdout=srun_log, stderr=subprocess.STDOUT,
                                                     start_new_session=True)
            except OSError as e:
                raise SlurmStartError(f"cannot run srun ({e}): is Slurm's client installed here?") from None

    def _await_port(self, deadline: float) -> int:
        while not self.job.lm_port_file.exists():
            self._wait_a_little(deadline, "the Logic Module's step never started its server", "logicmodule", 0.05)
        return int(self.job.lm_port_file.read_text())

    def _await_listening(self, host: str, port: int, deadline: float) -> None:
        """Waits until the Logic Module's port accepts connections: a gRPC channel refused while the
        JVM starts backs off, and would see the Logic Module up seconds late."""
        while True:
            try:
                socket.create_connection((host, port), timeout=1.0).close()
                return
            except OSError as e:
                self._wait_a_little(deadline, f"the Logic Module never listened on {host}:{port} ({e})",
                                    "logicmodule", 0.05)

    def _await_backends(self, plan: JobPlan, port: int, deadline: float) -> None:
        self._await_listening(plan.host(plan.lm_node), port, deadline)
        client = LogicModuleClient(f"{plan.host(plan.lm_node)}:{port}")
        try:
            while True:
                try:
                    client.health(timeout=1.0)
                    client.token = client.new_session(plan.user, self.job.password(), "").token
                    break
                except NotAuthenticatedError as e:
                    raise SlurmStartError(f"the job's Logic Module refused its administrator: {e}") from None
                except DataClayException as e:
                    self._wait_a_little(deadline, f"the Logic Module does not answer ({e})", "logicmodule", 0.1)
            wanted = set(plan.backend_nodes)
            with progress.bar("waiting for nodes' backends", total=len(wanted), unit="node") as shown:
                while True:
                    alive = {b.name for b in client.get_backends(timeout=5.0) if b.alive}
                    shown.update(len(wanted & alive) - shown.n)
                    if wanted <= alive:
                        return
                    missing = sorted(wanted - alive)
                    self._wait_a_little(deadline, f"backends on {', '.join(missing)} did not register",
                                        f"backend-{missing[0]}", 0.1)
        finally:
            if client.token:
                try:
                    client.close_session(timeout=5.0)
                except DataClayException:
                    pass
            client.close()

    def _wait_a_little(self, deadline: float, what: str, name: str, interval: float) -> None:
        """One turn of a start step's wait: fails if a server's step ended, or, past `deadline`, with
        `what` and the last lines of `name`'s logs; else sleeps `interval` seconds."""
        self._check_sruns()
        if time.monotonic() > deadline:
            raise SlurmStartError(self._failure(what, name)) from None
        time.sleep(interval)

    def _check_sruns(self) -> None:
        for name, srun in self._sruns.items():
            if srun.poll() is not None:
                raise SlurmStartError(self._failure(f"the step of {name} ended (srun exit code {srun.returncode})",
                                                    name))

    def _failure(self, what: str, name: str) -> str:
        lines = []
        for log in (self.job.logs / f"{name}.log", self.job.logs / f"srun-{name}.log"):
            try:
                lines += log.read_text(errors="replace").splitlines()[-12:]
            except OSError:
                pass
        return f"{what}; last lines of its logs in {self.job.logs}:\n" + "\n".join(lines)

    # ---- stop --------------------------------------------------------------------------------

    def stop(self, plan: JobPlan | None = None) -> list[str]:
        """Stops the backends, then the Logic Module, waits until each node erased its part, then
        erases the job's credentials. Returns what happened, one line each."""
        plan = plan or self.job.load()
        names = [f"backend-{node}" for node in plan.backend_nodes]
        lines = self._stop_steps(plan, names) + self._stop_steps(plan, ["logicmodule"])
        lines += [f"erased {path}" for path in self.job.erase_credentials(plan)]
        plan.state = "stopped"
        self.job.save(plan)
        for srun in self._sruns.values():
            try:
                srun.wait(timeout=10)
            except subprocess.TimeoutExpired:
                srun.kill()
        return lines

    def _stop_steps(self, plan: JobPlan, names: list[str]) -> list[str]:
        started = [n for n in names if self.job.step_file(n).exists() or n in self._sruns]
        for name in started:
            if not self.job.done_file(name).exists():
                self._signal(plan, name, "TERM")
        deadline = time.monotonic() + STOP_TIMEOUT
        while any(not self.job.done_file(n).exists() for n in started) and time.monotonic() < deadline:
            # a step that ended before its server was started has nothing to stop
            started = [n for n in started if self.job.step_file(n).exists()
                       or (n in self._sruns and self._sruns[n].poll() is None)]
            time.sleep(0.1)
        lines = []
        for name in started:
            done = self.job.done_file(name)
            if not done.exists():
                self._signal(plan, name, "KILL")
                lines.append(f"{name}: did not stop within {STOP_TIMEOUT:.0f} s: killed; its node-local data "
                             f"is left to the job's Epilog (scripts/slurm-epilog.sh)")
                continue
            record = json.loads(done.read_text())
            lines += [f"{name} on {record['node']}: erased {e}" for e in record["erased"]]
            lines += [f"{name} on {record['node']}: NOT erased {f}" for f in record["failures"]]
        return lines

    def _signal(self, plan: JobPlan, name: str, signal_name: str) -> None:
        """Signals every process of the step running server `name`."""
        step = ""
        try:
            step = json.loads(self.job.step_file(name).read_text()).get("step", "")
        except (OSError, ValueError):
            pass
        srun = self._sruns.get(name)
        if step:
            subprocess.run(["scancel", "--quiet", f"--signal={signal_name}", f"{plan.job_id}.{step}"],
                           capture_output=True, timeout=30)
        elif srun is not None and srun.poll() is None:
            srun.kill()  # not started on its node yet: ending srun ends the step
