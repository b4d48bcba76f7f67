"""One Slurm job's dataClay cluster on disk.

The job directory lives on the shared file system (every node of the job sees it; mode 0700, every
file in it 0600, and a job directory another user owns or could reach is refused):
  job.json           the plan: nodes, engine, pool settings, client files (no secret)
  cluster.secret     the secret the job's servers share (0600), made per job
  admin.password     the administrator's password (0600): the Logic Module reads it on standard input
  client.properties  how the job's programs reach the cluster (0600; also where --client-file says)
  lm.port            the port the Logic Module listens on, written by its node
  steps/             per server: its Slurm step (to stop it) and, once it ended, what its node erased
  logs/              one log per server, and srun's own messages (kept after the job: no secret)
The node-local directory of a node (`<pool dir>/dataclay-job<id>-<node>-<tag>`, on /dev/shm by
default; the tag is 64 random bits drawn at each start, so no other user can make it first) holds
that node's pool, the Logic Module's embedded metadata and deployed models; it is erased when the
server on that node stops (and by scripts/slurm-epilog.sh if the job was SIGKILLed)."""
from __future__ import annotations

import json
import os
import pathlib
import secrets
import shutil
import subprocess
from dataclasses import asdict, dataclass, field

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal import settings_table as table
from dataclay._internal.cli.common import erasure
from dataclay._internal.cli.common.cluster_state import write_private
from dataclay._internal.private_paths import check_private_dir, check_tree, ensure_private_dir, read_private


@dataclass
class JobPlan:
    """What `dataclay slurm start` decided for a job; saved as job.json, read by every node."""

    job_id: str
    lm_node: str
    backend_nodes: list[str]
    store: str
    store_size: str
    pool_dir: str
    host_suffix: str = ""
    port: int = 0                      # the Logic Module's port; 0: a free one, chosen on its node
    user: str = "admin"
    client_files: list[str] = field(default_factory=list)
    export_dir: str = ""               # where `dataclay slurm stop` exports the objects to ("": nowhere)
    signing_key: str = ""              # the key exports sign with and imports trust (the starter's DATACLAY_HOME's)
    state: str = "starting"            # starting | running | stopped
    node_tag: str = ""                 # the random part of the node-local directories' names

    def host(self, node: str) -> str:
        """The name a server on `node` advertises (the Slurm node name and the network's suffix)."""
        return node + self.host_suffix


@dataclass(frozen=True)
class SlurmSettings:
    """The keys `dataclay slurm` reads besides those of `dataclay start` (ClusterSettings)."""

    jobs_dir: pathlib.Path   # DATACLAY_SLURM_DIR
    pools_dir: pathlib.Path  # DATACLAY_SLURM_POOLS

    @classmethod
    def from_env(cls, env: dict | None = None) -> "SlurmSettings":
        """Reads the settings from `env` (the process environment by default)."""
        values = {k: v for k, v in (os.environ if env is None else env).items() if v}  # empty: unset
        return cls(table.value("DATACLAY_SLURM_DIR", values).absolute(),
                   table.value("DATACLAY_SLURM_POOLS", values).absolute())


def node_dir(pool_dir: str | os.PathLike, job_id: str, node: str, tag: str) -> pathlib.Path:
    """The node-local directory of `node` in job `job_id`, whose start drew `tag`
    (scripts/slurm-epilog.sh erases every dataclay-job<id>-* there)."""
    return pathlib.Path(pool_dir) / f"dataclay-job{job_id}-{node}-{tag}"


class JobDir:
    """The job directory on the shared file system (see the module's doc)."""

    def __init__(self, path: pathlib.Path):
        self.path = path
        self.plan_file = path / "job.json"
        self.secret_file = path / "cluster.secret"
        self.password_file = path / "admin.password"
        self.client_file = path / "client.properties"
        self.lm_port_file = path / "lm.port"
        self.logs = path / "logs"
        self.steps = path / "steps"

    def create(self) -> None:
        """Makes the directory (0700); refuses one whose cluster was started and not stopped, and
        one that another user owns or could reach."""
        ensure_private_dir(self.path, "the job directory")
        check_tree(self.path, "the job directory")
        if self.plan_file.exists() and self.load().state != "stopped":
            raise InvalidArgumentError(
                f"a dataClay cluster was already started for this job in {self.path}: "
                f"stop it first (`dataclay slurm stop`)")
        for sub in (self.steps, self.logs):
            if sub == self.steps and sub.exists():
                shutil.rmtree(sub)  # records of an earlier, stopped start in the same job
            ensure_private_dir(sub, "the job directory's " + sub.name)
        self.lm_port_file.unlink(missing_ok=True)

    def save(self, plan: JobPlan) -> None:
        """Writes job.json atomically."""
        write_private(self.plan_file, json.dumps(asdict(plan), indent=2) + "\n")

    def load(self) -> JobPlan:
        """The job's plan; a clear error when no cluster was started here."""
        try:
            check_private_dir(self.path, "the job directory")  # nobody else may have written the plan
            return JobPlan(**json.loads(read_private(self.plan_file)))
        except FileNotFoundError:
            raise InvalidArgumentError(f"no dataClay cluster was started in {self.path} "
                                       f"(no {self.plan_file.name})") from None
        except (ValueError, TypeError) as e:
            raise InvalidArgumentError(f"{self.plan_file} is not a job plan of this version: {e}") from None

    def make_credentials(self) -> str:
        """A fresh cluster secret and administrator password for this job; returns the password."""
        password = secrets.token_urlsafe(24)
        write_private(self.secret_file, secrets.token_urlsafe(48) + "\n")
        write_private(self.password_file, password + "\n")
        return password

    def password(self) -> str:
        """The administrator's password (read from its 0600 file)."""
        return read_private(self.password_file).decode().strip()

    def write_client_files(self, plan: JobPlan, port: int) -> list[pathlib.Path]:
        """Writes the client configuration (0600) to client.properties and every --client-file."""
        text = "\n".join([
            f"# Written by `dataclay slurm` for Slurm job {plan.job_id}: how its programs reach its cluster.",
            f"DATACLAY_HOST={plan.host(plan.lm_node)}", f"DATACLAY_PORT={port}",
            f"DATACLAY_USER={plan.user}", f"DATACLAY_PASSWORD={self.password()}"]) + "\n"
        paths = [self.client_file, *map(pathlib.Path, plan.client_files)]
        for path in paths:
            write_private(path, text)
        return paths

    def step_file(self, name: str) -> pathlib.Path:
        """Where the server `name` (logicmodule, backend-<node>) records its Slurm step."""
        return self.steps / f"{name}.step"

    def done_file(self, name: str) -> pathlib.Path:
        """Where the server `name` records, once it ended, how it ended and what its node erased."""
        return self.steps / f"{name}.done"

    def erase_credentials(self, plan: JobPlan | None) -> list[str]:
        """Overwrites and removes the job's secrets and client files; returns what it erased."""
        erased = []
        paths = [self.secret_file, self.password_file, self.client_file,
                 *map(pathlib.Path, plan.client_files if plan else [])]
        for path in paths:
            if os.path.lexists(path):
                erasure.erase_tree(path)
                erased.append(str(path))
        return erased


def allocation(env: dict | None = None) -> tuple[str, list[str]]:
    """This job's ID and node names (in Slurm's order), from the environment Slurm gives a job."""
    env = os.environ if env is None else env
    job_id, nodelist = env.get("SLURM_JOB_ID"), env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
    if not job_id or not nodelist:
        raise InvalidArgumentError("`dataclay slurm` runs inside a Slurm allocation (sbatch, salloc or srun): "
                                   "SLURM_JOB_ID and SLURM_JOB_NODELIST are not set")
    if not job_id.isdigit():
        raise InvalidArgumentError(f"SLURM_JOB_ID must be a job number, not {job_id!r}")
    try:
        out = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True, text=True,
                             timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise InvalidArgumentError(f"cannot list the job's nodes with `scontrol show hostnames`: {e}") from None
    return job_id, out.split()
