"""A real Slurm over the hosts of a HostNetwork: Debian's munged, slurmctld and one slurmd per host,
each with its own files in one temporary directory, started by the test and removed at its end.

munged runs in the root namespace with its own key and socket (slurm.conf names the socket in
AuthInfo, so the machine's munged, if any, is never used); slurmctld runs on a host of its own, and
every compute host runs a slurmd (proctrack/linuxproc, task/none: no cgroups; no accounting).
Per-node spool, pid and log files use slurm.conf's %n. Commands (sbatch, srun, scancel, scontrol)
run from the test process with `env()`, which points them at this slurm.conf.

The Epilog of the cluster is the shipped scripts/slurm-epilog.sh, run through a small wrapper that
appends what it printed to `epilog.log`, so tests can tell what it erased. `unavailable()` says why
Slurm cannot run here, for tests to skip."""
from __future__ import annotations

import contextlib
import os
import pathlib
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass

from harness.hosts import HostNetwork, end_process_group

REPO = pathlib.Path(__file__).resolve().parents[2]
EPILOG = REPO / "scripts" / "slurm-epilog.sh"
TOOLS = ("slurmctld", "slurmd", "sbatch", "srun", "scancel", "scontrol", "munged", "mungekey")
FINAL_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
                "BOOT_FAIL", "DEADLINE"}


def unavailable() -> str | None:
    """Why a test Slurm cannot be started here, or None when it can."""
    for tool in TOOLS:
        if shutil.which(tool) is None and not pathlib.Path("/usr/sbin", tool).exists():
            return f"`{tool}` is not installed (Debian: slurmctld slurmd slurm-client munge; scripts/install-deps.sh)"
    return None


def _tool(name: str) -> str:
    return shutil.which(name) or str(pathlib.Path("/usr/sbin", name))


@dataclass
class JobInfo:
    """What scontrol says about a job."""

    job_id: int
    state: str
    exit_code: int
    signal: int
    reason: str
    nodes: str


class SlurmCluster:
    """slurmctld on `network[controller]`, a slurmd on each of `nodes`; always close() it."""

    def __init__(self, network: HostNetwork, controller: str, nodes: list[str], cpus: int = 2):
        self.network = network
        self.controller = network[controller]
        self.nodes = [network[n] for n in nodes]
        self.cpus = cpus
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-slurm-"))
        self.dir.chmod(0o755)
        self.conf = self.dir / "slurm.conf"
        self.munge_socket = self.dir / "munge" / "munge.socket"
        self.epilog_log = self.dir / "epilog.log"
        self.shared = self.dir / "shared"  # job scripts, their output, the jobs' directories
        self._daemons: dict[str, subprocess.Popen] = {}
        self._jobs: list[int] = []

    # ---- start -------------------------------------------------------------------------------

    def start(self, timeout: float = 60) -> "SlurmCluster":
        """Starts munged, slurmctld and the slurmds, and waits until every node is idle."""
        try:
            self._start_munge()
            self._write_conf()
            ctld = [_tool("slurmctld"), "-D", "-i", "-f", str(self.conf)]
            self._daemon("slurmctld", self.controller.command(ctld))
            for node in self.nodes:
                (self.dir / "nodes" / node.name / "spool").mkdir(parents=True, exist_ok=True)
                self._daemon(f"slurmd-{node.name}", node.command([_tool("slurmd"), "-D", "-f", str(self.conf)]))
            self._wait_idle(timeout)
        except BaseException:
            self.close()
            raise
        return self

    def _start_munge(self) -> None:
        munge = self.munge_socket.parent
        munge.mkdir()
        munge.chmod(0o711)  # munged wants the socket's directory searchable by everyone
        key = munge / "munge.key"
        subprocess.run([_tool("mungekey"), "--create", f"--keyfile={key}"], check=True, capture_output=True,
                       timeout=30)
        key.chmod(0o600)
        argv = [_tool("munged"), "-F", f"--socket={self.munge_socket}", f"--key-file={key}",
                f"--pid-file={munge / 'munged.pid'}", f"--log-file={munge / 'munged.log'}",
                f"--seed-file={munge / 'munged.seed'}"]
        self._daemon("munged", argv)
        deadline = time.monotonic() + 20
        while not self.munge_socket.exists():
            if self._daemons["munged"].poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"munged did not start:\n{self._tail(munge / 'munged.log')}")
            time.sleep(0.05)

    def _write_conf(self) -> None:
        wrapper = self.dir / "epilog.sh"
        wrapper.write_text(f"#!/bin/sh\n'{EPILOG}' >> '{self.epilog_log}' 2>&1\nexit 0\n")
        wrapper.chmod(0o755)
        d = self.dir
        lines = [
            "ClusterName=dctest",
            f"SlurmctldHost={self.controller.name}({self.controller.ip})",
            "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={self.munge_socket}",
            "SlurmUser=root", "SlurmdUser=root",
            f"StateSaveLocation={d / 'ctld-state'}", f"SlurmctldPidFile={d / 'slurmctld.pid'}",
            f"SlurmctldLogFile={d / 'slurmctld.log'}",
            f"SlurmdSpoolDir={d / 'nodes' / '%n' / 'spool'}", f"SlurmdPidFile={d / 'nodes' / '%n' / 'slurmd.pid'}",
            f"SlurmdLogFile={d / 'nodes' / '%n' / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/none", "SwitchType=switch/none",
            "MpiDefault=none", "SchedulerType=sched/backfill", "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU", "ReturnToService=2", "KillWait=30", "MinJobAge=600",
            "SlurmctldDebug=info", "SlurmdDebug=info", "SlurmdParameters=config_overrides",
            # job IDs unique among concurrent test runs: jobs' pool directories are named after them
            f"FirstJobId={self.network.number * 10000 + 1}",
            f"Epilog={wrapper}",
        ]
        lines += [f"NodeName={n.name} NodeAddr={n.ip} CPUs={self.cpus} State=UNKNOWN" for n in self.nodes]
        lines.append(f"PartitionName=test Nodes={','.join(n.name for n in self.nodes)} Default=YES "
                     "MaxTime=INFINITE State=UP")
        (d / "ctld-state").mkdir()
        self.conf.write_text("\n".join(lines) + "\n")
        # slurmd initialises a cgroup plugin even with task/none and proctrack/linuxproc; a host's
        # namespace has no cgroup file system mounted: point it at an empty directory, used for nothing
        (d / "cgroup").mkdir()
        (d / "cgroup.conf").write_text(f"CgroupPlugin=cgroup/v1\nCgroupMountpoint={d / 'cgroup'}\n"
                                       "CgroupAutomount=no\n")

    def _daemon(self, name: str, argv: list[str]) -> None:
        log = open(self.dir / f"{name}.out", "ab")
        with log:
            self._daemons[name] = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                                   stderr=subprocess.STDOUT, start_new_session=True,
                                                   env=self.env())

    def _wait_idle(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        names = {n.name for n in self.nodes}
        while True:
            out = self.run(["sinfo", "-h", "-N", "-o", "%N %t"], check=False, timeout=20).stdout
            idle = {line.split()[0] for line in out.splitlines() if line.split()[1:] == ["idle"]}
            if names <= idle:
                return
            dead = [n for n, p in self._daemons.items() if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                raise RuntimeError(f"Slurm nodes not idle (ended: {dead}; sinfo: {out!r}):\n{self.log_tail()}")
            time.sleep(0.2)

    # ---- commands ----------------------------------------------------------------------------

    def env(self, extra: dict | None = None) -> dict:
        """An environment for Slurm's commands (and what jobs inherit): this cluster's slurm.conf."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SRUN_"))}
        env["SLURM_CONF"] = str(self.conf)
        env.update(extra or {})
        return env

    def run(self, argv: list[str], check: bool = True, timeout: float = 60, env: dict | None = None
            ) -> subprocess.CompletedProcess:
        """Runs a Slurm client command (sinfo, scontrol, ...) against this cluster."""
        result = subprocess.run([_tool(argv[0]), *argv[1:]], env=env or self.env(), capture_output=True, text=True,
                                timeout=timeout)
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} exited {result.returncode}: {result.stdout}{result.stderr}")
        return result

    def submit(self, body: str | pathlib.Path, *options: str, env: dict | None = None, args: tuple = ()
               ) -> tuple[int, pathlib.Path]:
        """sbatches a job script (`body` as text, written to the shared directory, or a script file)
        with `args` after it; returns the job ID and the file its output goes to."""
        self.shared.mkdir(exist_ok=True)
        script = body
        if isinstance(body, str):
            script = self.shared / f"job-{len(self._jobs) + 1}.sh"
            script.write_text("#!/bin/bash\n" + body)
            script.chmod(0o755)
        job_id = self.sbatch(script, f"--output={self.shared}/job-%j.out", *options, env=env, args=args)
        return job_id, self.shared / f"job-{job_id}.out"

    def epilog_lines(self, job_id: int) -> list[str]:
        """What the Epilog printed for `job_id` (one line per node it ran on)."""
        try:
            lines = self.epilog_log.read_text().splitlines()
        except FileNotFoundError:
            return []
        return [line for line in lines if f"job {job_id}:" in line]

    def sbatch(self, script: pathlib.Path, *options: str, env: dict | None = None, args: tuple = ()) -> int:
        """Submits `script` (sbatch --parsable) with `args`, and returns the job ID."""
        out = self.run(["sbatch", "--parsable", *options, str(script), *args], env=env).stdout.strip()
        job_id = int(out.split(";")[0])
        self._jobs.append(job_id)
        return job_id

    def job(self, job_id: int) -> JobInfo:
        """The job's state and exit code, as scontrol shows it."""
        out = self.run(["scontrol", "-o", "show", "job", str(job_id)]).stdout
        fields = dict(re.findall(r"(\w+)=(\S*)", out))
        code, _, sig = fields.get("ExitCode", "0:0").partition(":")
        return JobInfo(job_id, fields.get("JobState", "?"), int(code or 0), int(sig or 0), fields.get("Reason", ""),
                       fields.get("NodeList", ""))

    def wait_state(self, job_id: int, states: set[str], timeout: float) -> JobInfo:
        """Waits until the job is in one of `states`; raises with the logs on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            info = self.job(job_id)
            if info.state in states:
                return info
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} still {info.state} after {timeout:.0f} s:\n{self.log_tail()}")
            time.sleep(0.25)

    def wait(self, job_id: int, timeout: float = 240) -> JobInfo:
        """Waits until the job has ended."""
        return self.wait_state(job_id, FINAL_STATES, timeout)

    def scancel(self, job_id: int, *options: str) -> None:
        """scancel the job (with `options`, e.g. --signal=KILL)."""
        self.run(["scancel", *options, str(job_id)])

    # ---- end ---------------------------------------------------------------------------------

    def close(self) -> None:
        """Cancels the jobs, stops every daemon (SIGTERM, then SIGKILL) and removes the directory."""
        if self._daemons.get("slurmctld") is not None and self._daemons["slurmctld"].poll() is None:
            for job_id in self._jobs:
                self.run(["scancel", str(job_id)], check=False, timeout=20)
        for name in ["slurmctld", *[n for n in self._daemons if n.startswith("slurmd")], "munged"]:
            process = self._daemons.pop(name, None)
            if process is None:
                continue
            end_process_group(process)
        shutil.rmtree(self.dir, ignore_errors=True)

    def log_tail(self, lines: int = 30) -> str:
        """The end of every daemon log, for failure messages."""
        logs = [self.dir / "slurmctld.log", *sorted((self.dir / "nodes").glob("*/slurmd.log")),
                *sorted(self.dir.glob("*.out"))]
        return "\n".join(f"---- {p.relative_to(self.dir)}\n{self._tail(p, lines)}" for p in logs if p.exists())

    @staticmethod
    def _tail(path: pathlib.Path, lines: int = 30) -> str:
        try:
            return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


@contextlib.contextmanager
def slurm_on_hosts(nodes: list[str]):
    """Namespace hosts `ctl` and `nodes`, with slurmctld on ctl and a slurmd on each node; yields the
    SlurmCluster and removes everything at the end, also when the test failed."""
    with HostNetwork(["ctl", *nodes]) as network:
        cluster = SlurmCluster(network, "ctl", nodes).start()
        try:
            yield cluster
        finally:
            cluster.close()


def _dataclay_processes(network: HostNetwork) -> list[tuple[str, int, str]]:
    found = []
    for host in network.hosts:
        for pid in host.pids():
            try:
                cmdline = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if any(m in cmdline for m in ("logicmodule.jar", "dataservice.jar", "dataclay._internal", "dataclay slurm")):
                found.append((host.name, pid, cmdline))
    return found


def server_processes(network: HostNetwork) -> list[str]:
    """dataClay processes (launchers, node wrappers, JVMs, execution environments) still running on any host."""
    return [f"{host}: {pid} {cmdline[:120]}" for host, pid, cmdline in _dataclay_processes(network)]


def kill_dataclay(network: HostNetwork) -> int:
    """SIGKILLs every dataClay process on every host at once (all are stopped first, so none of them
    sees another die and cleans up); returns how many."""
    pids = [pid for _, pid, _ in _dataclay_processes(network)]
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
    return len(pids)


def job_pools(job_id: int, pool_dir: str = "/dev/shm") -> list[str]:
    """The node-local directories `dataclay slurm` made for `job_id` that still exist."""
    return sorted(str(p) for p in pathlib.Path(pool_dir).glob(f"dataclay-job{job_id}-*"))
