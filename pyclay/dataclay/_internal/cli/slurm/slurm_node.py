"""`dataclay slurm node ROLE JOB_DIR`: one server of a Slurm job's cluster, as the Slurm step that
`dataclay slurm start` runs on its node with srun.

It starts the server JVM (the Logic Module or a Data Service) with the README's multi-node
settings, forwards SIGTERM/SIGINT/SIGHUP to it (Slurm also signals every process of the step on
scancel and at the time limit), and once the server has ended erases what the job left on this
node: the pool (with the Data Service's own eraser), the embedded metadata, the deployed models.
The Logic Module's node also erases the job's credentials on the shared file system: without a
Logic Module they open nothing, and a cancelled job has no launcher left to do it.

Nothing secret is on its command line or in its environment: the cluster secret travels as a file
path, the administrator's password from its 0600 file to the Logic Module's standard input.

The node-local directory is made here, mode 0700, under a name the job's start drew at random; one
found there that another user owns or could reach is refused and left alone (never written to or
erased by the job: the Epilog erases it), and so is a pool directory (--pool-dir) that another user
could replace it in. The JVM runs with umask 077."""
from __future__ import annotations

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time

from dataclay._internal import sandbox
from dataclay.exceptions import DataClayException
from dataclay._internal.cli.common import class_archives, erasure, placement
from dataclay._internal.cli.common.cluster_state import free_port, write_private
from dataclay._internal.cli.local.launcher import DS_JAR, LM_JAR, SERVER_UMASK
from dataclay._internal.cli.common.settings import ClusterSettings
from dataclay._internal.cli.slurm.slurm_job import JobDir, JobPlan, node_dir
from dataclay._internal.private_paths import check_ancestors, check_private_dir, ensure_private_dir, open_private

STOP_WAIT = 25.0   # seconds a stopping server gets before SIGKILL (within Slurm's default KillWait of 30 s)
ROLES = ("logicmodule", "backend")
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)  # scancel, the time limit, a lost terminal


def this_node() -> str:
    """The Slurm name of the node this runs on (SLURMD_NODENAME in a step, else the host name)."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def metrics_env(port: int | None, role: str) -> dict[str, str]:
    """DATACLAY_METRICS_PORT for a server of the job: the port set for the Logic Module, the next one
    for every backend (one per node, and one of them shares the Logic Module's node); none when the
    job's environment does not set it; 0 (any free port) for all when it says 0."""
    if port is None:
        return {}
    return {"DATACLAY_METRICS_PORT": str(port and port + (0 if role == "logicmodule" else 1))}


class NodeServer:
    """The server of one role on this node, for the job in `job`."""

    def __init__(self, role: str, job: JobDir, settings: ClusterSettings):
        self.role = role
        self.job = job
        self.plan: JobPlan = job.load()
        self.settings = settings
        self.node = this_node()
        self.name = "logicmodule" if role == "logicmodule" else f"backend-{self.node}"
        self.local = node_dir(self.plan.pool_dir, self.plan.job_id, self.node, self.plan.node_tag)
        self.claimed = False  # True once self.local is known to be this job's: only then is it erased
        self.own = self.local / ("lm" if role == "logicmodule" else "backend")
        self.pool = self.local / "pool"
        self.server: subprocess.Popen | None = None
        self.stopping = False

    def run(self) -> int:
        """Runs the server to its end, erases this node's part, records it; returns the exit code."""
        record = {"step": os.environ.get("SLURM_STEP_ID", ""), "node": self.node, "pid": os.getpid()}
        write_private(self.job.step_file(self.name), json.dumps(record) + "\n")
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._stop)
        code = 1
        try:
            code = self._serve()
        except (DataClayException, OSError) as e:
            print(f"dataclay slurm node: {self.name} on {self.node}: {e}", flush=True)
        finally:
            # from here on this node only cleans up. A cancelled job's steps are signalled twice, by
            # Slurm and by the job's launcher: the second signal must not end the store eraser midway,
            # so this process and what it starts (a disposition of SIG_IGN is inherited, and the JVM
            # keeps it) ignore them; SIGKILL at Slurm's KillWait still ends it, leaving the Epilog's part
            for sig in STOP_SIGNALS:
                signal.signal(sig, signal.SIG_IGN)
            erased, failures = self._erase()
            done = {"node": self.node, "code": code, "stopped": self.stopping, "erased": erased,
                    "failures": failures}
            write_private(self.job.done_file(self.name), json.dumps(done) + "\n")
        return 0 if self.stopping and code in (0, 143) else code

    def _serve(self) -> int:
        self._claim()
        ensure_private_dir(self.own, "the node-local directory")
        env = self.settings.server_env({"DATACLAY_CLUSTER_SECRET_FILE": str(self.job.secret_file),
                                        "DATACLAY_HOME": str(self.own)})
        if self.role == "logicmodule":
            port = self.plan.port or free_port(address=socket.gethostbyname(self.plan.host(self.node)))
            env.update({"DATACLAY_HOST": self.plan.host(self.node), "DATACLAY_PORT": str(port),
                        "DATACLAY_USER": self.plan.user})
            jar, stdin = LM_JAR, os.fdopen(open_private(self.job.password_file, "r"), "rb")
        else:
            port = int(self.job.lm_port_file.read_text())
            env.update({"DATACLAY_HOST": self.plan.host(self.plan.lm_node), "DATACLAY_PORT": str(port),
                        "DATACLAY_BACKEND_NAME": self.node, "DATACLAY_BACKEND_HOST": self.plan.host(self.node),
                        "DATACLAY_BACKEND_PORT": "0", "DATACLAY_BACKEND_DIR": str(self.own),
                        "DATACLAY_STORE": self.plan.store, "DATACLAY_STORE_PATH": str(self.pool),
                        "DATACLAY_STORE_SIZE": self.plan.store_size, "DATACLAY_PYTHON": sys.executable,
                        "DATACLAY_EE_LAUNCHER": sandbox.LAUNCHER})
            if self.settings.store_key_file is not None:
                env["DATACLAY_STORE_KEY_FILE"] = str(self.settings.store_key_file)
            if str(self.pool).startswith("/dev/shm/"):
                env.setdefault("PMEM_IS_PMEM_FORCE", "1")  # DRAM-backed emulation, as `dataclay start` does
            jar, stdin = DS_JAR, subprocess.DEVNULL
        env.update(metrics_env(self.settings.metrics_port, self.role))
        jar_path = self.settings.jars / jar
        if not jar_path.is_file():
            raise DataClayException(f"{jar_path} is missing: run `make build` (or set DATACLAY_JARS)")
        command = [self.settings.java, *self.settings.java_opts,
                   *class_archives.jvm_options(jar_path, self.settings.class_archives), "-jar", str(jar_path)]
        print(f"==== {time.strftime('%Y-%m-%d %H:%M:%S')} {self.name} on {self.node}: starting {jar}", flush=True)
        # a node runs one backend: it takes DATACLAY_CPUS's first list (or the first NUMA node with CPUs)
        cpus = placement.cpus_for(self.settings.cpus, 0) if self.role != "logicmodule" else None
        try:
            with placement.placed(cpus):
                self.server = subprocess.Popen(command, env=env, stdin=stdin, cwd=self.own, umask=SERVER_UMASK)
        finally:
            if stdin is not subprocess.DEVNULL:
                stdin.close()
        if self.role == "logicmodule":
            write_private(self.job.lm_port_file, f"{port}\n")
        if self.stopping:
            self.server.terminate()  # a stop that came while the JVM was being started
        deadline = None
        while True:
            try:
                return self.server.wait(timeout=0.25)
            except subprocess.TimeoutExpired:
                if self.stopping:
                    deadline = deadline or time.monotonic() + STOP_WAIT
                    if time.monotonic() > deadline:
                        print(f"dataclay slurm node: {self.name} did not stop in {STOP_WAIT:.0f} s: killed",
                              flush=True)
                        self.server.kill()
                        deadline = float("inf")

    def _claim(self) -> None:
        """Makes the node-local directory (0700), or takes the one the other server of this job on
        this node made; refuses one another user made, and a pool directory others could replace
        it in. The name is the job's own: no other job's wrapper makes it."""
        check_ancestors(self.local, "the node-local directory")
        try:
            os.mkdir(self.local, 0o700)
        except FileExistsError:
            pass
        check_private_dir(self.local, "the node-local directory")
        self.claimed = True

    def _stop(self, signum, frame) -> None:
        """Asks the server to stop cleanly (SIGTERM); _serve kills it if it has not ended in STOP_WAIT s.
        (It never waits here: a signal handler runs inside the main thread's wait.)"""
        self.stopping = True
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()

    def _erase(self) -> tuple[list[str], list[str]]:
        """Erases this role's part of the node-local directory (and, for the Logic Module, the job's
        credentials); returns (what was erased, what could not be)."""
        erased, failures = [], []
        if not self.claimed:
            if os.path.lexists(self.local):
                failures.append(f"{self.local}: not made by this job, left as it was (the Epilog erases it)")
        elif self.role == "backend" and self.pool.exists():
            env = self.settings.server_env({"DATACLAY_STORE": self.plan.store})
            try:
                erased += erasure.erase_stores(self.settings.java, self.settings.jars / DS_JAR,
                                               {self.node: self.pool}, env)
                if self.pool.exists():
                    erasure.erase_tree(self.pool)
            except (DataClayException, OSError, subprocess.SubprocessError) as e:
                failures.append(f"pool {self.pool}: {e}")
        if self.claimed and self.own.exists():
            try:
                files, size = erasure.erase_tree(self.own)
                erased.append(f"{self.own} ({files} files, {size} bytes)")
            except OSError as e:
                failures.append(f"{self.own}: {e}")
        if self.claimed:
            try:
                self.local.rmdir()  # the last of the node's servers removes the directory
            except OSError:
                pass
        if self.role == "logicmodule":
            erased += self.job.erase_credentials(self.plan)
        for line in erased:
            print(f"dataclay slurm node: erased {line}", flush=True)
        for line in failures:
            print(f"dataclay slurm node: NOT erased {line}", flush=True)
        return erased, failures


def main(role: str, job_dir: str) -> int:
    """Entry point of `dataclay slurm node`."""
    if role not in ROLES:
        print(f"dataclay slurm node: role must be one of {', '.join(ROLES)}, not {role!r}", file=sys.stderr)
        return 2
    try:
        server = NodeServer(role, JobDir(pathlib.Path(job_dir)), ClusterSettings.from_env())
    except DataClayException as e:
        print(f"dataclay slurm node: {e}", file=sys.stderr)
        return 2
    return server.run()
