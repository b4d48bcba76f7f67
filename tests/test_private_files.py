"""Files belong to their server (issue 21): everything a cluster keeps on a node is its user's
alone (directories 0700, files 0600), and a home, pool or Slurm directory that another user made
first or could reach is refused at start, named, and left untouched. Another user is simulated
with os.chown to an unused uid (the suite runs as root), as a stranger on a shared node would make
a directory first; the servers started on their own (as Slurm or a multi-node deployment starts
them) check their own directories too."""
import getpass
import json
import os
import pathlib
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap

import pytest

from harness.cluster import REPO, Cluster
from dataclay._internal.cli.common.settings import ClusterSettings
from dataclay._internal.cli.slurm.slurm_job import JobDir, JobPlan

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="simulating another user needs root (os.chown)")

STRANGER = 54321  # a uid no account has: the other user of the node
JARS = REPO / "pyclay" / "dataclay" / "_internal" / "jars"
EPILOG = REPO / "scripts" / "slurm-epilog.sh"
# everything in the home, the pools and the CA key's directory is 0700/0600; nothing is excepted
# (the execution environment's socket lives in its own temporary directory, not in any of them)
EXCEPTIONS: dict[str, str] = {}

CLIENT = textwrap.dedent("""
    from dataclay import api
    api.init()
    from people.model import Person
    for backend_id in sorted(api.get_backends()):
        p = Person("p-" + backend_id[:8], 40)
        p.make_persistent(backend_id=backend_id)
        assert p.birthday() == 41  # runs in the backend's execution environment
    api.finish()
""")


def _mode(path: pathlib.Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _plant(path: pathlib.Path, mode: int = 0o777) -> pathlib.Path:
    """A directory another user made, with a file of theirs in it."""
    path.mkdir()
    (path / "bait").write_text("the stranger's")
    for p in (path, path / "bait"):
        os.chown(p, STRANGER, STRANGER)
    path.chmod(mode)
    return path


def _not_private(*roots: pathlib.Path) -> list[str]:
    """Every entry under `roots` (themselves included) that is not this user's directory 0700 or
    file 0600, except those EXCEPTIONS names."""
    found = []
    for root in roots:
        for path in [root, *root.rglob("*")]:
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                continue  # a temporary file gone meanwhile
            wanted = 0o700 if stat.S_ISDIR(info.st_mode) else 0o600
            if (info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) != wanted
                    or not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode))) and path.name not in EXCEPTIONS:
                found.append(f"{path} uid {info.st_uid} mode {stat.filemode(info.st_mode)}")
    return found


def _umask(pid: int) -> str:
    return next(line.split()[1] for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines()
                if line.startswith("Umask:"))


@pytest.fixture
def cluster():
    """A cluster that is not started (tests start it), always stopped and removed."""
    made = Cluster(backends=1)
    yield made
    made.stop()


def _server(jar: str, env: dict, cwd: pathlib.Path) -> subprocess.CompletedProcess:
    """Runs a server jar on its own, as a multi-node deployment does; it is expected to refuse."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("DATACLAY_")}
    full.update(env)
    return subprocess.run(["java", "-jar", str(JARS / jar)], env=full, cwd=cwd, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)


# ---- the local launcher -----------------------------------------------------------------------

def test_a_home_others_may_read_is_refused_with_the_chmod_that_fixes_it(cluster):
    # setup: a home made by hand, or by an earlier release, 0755
    cluster.home.chmod(0o755)
    # run
    refused = cluster.dataclay("start", "--backends", "1")
    # verify: refused, named, nothing started or written
    assert refused.returncode == 1
    assert f"DATACLAY_HOME {cluster.home} has mode 0755: group or others may reach it; run `chmod 700 " \
           f"{cluster.home}`" in refused.stderr, refused.stderr
    assert list(cluster.home.iterdir()) == [] and list(cluster.pools.iterdir()) == []
    assert cluster.pids() == {}
    # and the chmod it names is all it takes
    cluster.home.chmod(0o700)
    cluster.start()
    assert set(cluster.pids()) == {"logicmodule", "backend-1"}


def test_a_home_another_user_owns_is_refused_and_left_as_it_was(cluster):
    # setup
    os.chown(cluster.home, STRANGER, STRANGER)
    # run
    refused = cluster.dataclay("start", "--backends", "1")
    # verify
    assert refused.returncode == 1
    assert f"DATACLAY_HOME {cluster.home} is owned by uid {STRANGER}, not by you" in refused.stderr, refused.stderr
    assert list(cluster.home.iterdir()) == [] and os.stat(cluster.home).st_uid == STRANGER
    assert cluster.pids() == {}


def test_files_an_earlier_release_left_readable_are_refused_until_the_named_chmod(cluster):
    # setup: a cluster that ran, then its logs and metadata made readable as before issue 21
    cluster.start()
    cluster.stop_processes()
    for path in (cluster.home / "logs", cluster.home / "lm"):
        path.chmod(0o755)
    for path in [*(cluster.home / "logs").iterdir(), cluster.home / "lm" / "metadata.db"]:
        path.chmod(0o644)
    # run
    refused = cluster.dataclay("start")
    # verify: every one is listed, with the one command that fixes them all
    assert refused.returncode == 1
    assert f"DATACLAY_HOME {cluster.home} holds files other users may reach" in refused.stderr
    for name in ("logs (mode 0755)", "logs/logicmodule.log (mode 0644)", "lm/metadata.db (mode 0644)"):
        assert f"{cluster.home}/{name}" in refused.stderr, refused.stderr
    assert f"run `chmod -R go= {cluster.home}`" in refused.stderr
    assert cluster.pids() == {}
    subprocess.run(["chmod", "-R", "go=", str(cluster.home)], check=True)
    cluster.start()
    assert set(cluster.pids()) == {"logicmodule", "backend-1"}


@pytest.mark.parametrize("where", ["the pools' directory", "a backend's pool"])
def test_a_pool_directory_another_user_made_first_is_refused_and_nothing_is_written_to_it(cluster, where):
    # setup: /dev/shm is everybody's; the stranger made the directory before the victim's start
    if where == "the pools' directory":
        planted = pathlib.Path(tempfile.mktemp(prefix="dataclay-planted-", dir="/dev/shm"))
        cluster.env["DATACLAY_STORE_PATH"] = str(planted)
    else:
        planted = cluster.pools / "backend-1"
    _plant(planted)
    try:
        # run
        refused = cluster.dataclay("start", "--backends", "1")
        # verify
        assert refused.returncode == 1
        named = f"{planted} is owned by uid {STRANGER}" if where == "the pools' directory" \
            else f"{planted} (owned by uid {STRANGER})"  # listed among what the pools' directory holds
        assert named in refused.stderr, refused.stderr
        assert sorted(p.name for p in planted.iterdir()) == ["bait"]
        assert (planted / "bait").read_text() == "the stranger's" and _mode(planted) == 0o777
        assert cluster.pids() == {}
    finally:
        shutil.rmtree(planted)


def test_a_pool_directory_others_may_read_is_refused(cluster):
    # setup
    cluster.pools.chmod(0o755)
    # run
    refused = cluster.dataclay("start", "--backends", "1")
    # verify
    assert refused.returncode == 1
    assert f"the pools' directory (DATACLAY_STORE_PATH) {cluster.pools} has mode 0755" in refused.stderr
    assert list(cluster.pools.iterdir()) == []


def test_after_a_start_every_file_of_the_home_the_pools_and_the_ca_key_is_the_servers_alone(make_cluster):
    # setup: TLS, models deployed, objects stored and methods run on both backends
    cluster = make_cluster(backends=2, tls=True)
    cluster.run_client(CLIENT)
    ca_keys = ClusterSettings.from_env(cluster.env).ca_key_dir
    lm = cluster.home / "lm"
    # verify, while everything runs (the database's -wal and -shm files exist now)
    assert _not_private(cluster.home, cluster.pools, ca_keys) == []
    assert {p.name for p in lm.iterdir()} >= {"metadata.db", "metadata.db-wal", "metadata.db-shm"}
    assert not (cluster.home / "tls" / "ca.key").exists() and (ca_keys / "ca.key").exists()
    servers = list(cluster.pids().values())
    environments = [cluster.ee_pid(name) for name in ("backend-1", "backend-2")]
    assert {_umask(pid) for pid in servers + environments} == {"0077"}


def test_a_default_pool_directory_has_a_random_name_and_a_new_one_once_it_is_gone(cluster):
    # setup: no DATACLAY_STORE_PATH: the launcher chooses
    del cluster.env["DATACLAY_STORE_PATH"]
    cluster.start()
    first = pathlib.Path(cluster.state()["store_root"])
    roots = [first]
    try:
        assert re.fullmatch(rf"/dev/shm/dataclay-{re.escape(getpass.getuser())}-[0-9a-f]{{16}}", str(first))
        assert _mode(first) == 0o700 and (first / "backend-1").is_dir()
        cluster.stop_processes()
        # run: a reboot empties /dev/shm, and the stranger makes the name they saw there first
        shutil.rmtree(first)
        planted = _plant(first)
        restarted = cluster.dataclay("start")
        # verify: a new name; the planted directory is neither used nor touched
        assert restarted.returncode == 0, restarted.stderr
        assert f"the pools' directory {first} is not yours (uid {STRANGER} made it" in restarted.stderr
        second = pathlib.Path(cluster.state()["store_root"])
        roots.append(second)
        assert second != first and _mode(second) == 0o700 and (second / "backend-1" / "kv.pool").exists()
        assert sorted(p.name for p in planted.iterdir()) == ["bait"]
    finally:
        cluster.dataclay("stop", "--erase")
        for root in roots:
            shutil.rmtree(root, ignore_errors=True)


# ---- servers started on their own ---------------------------------------------------------------

def _secret(directory: pathlib.Path) -> pathlib.Path:
    secret = directory / "cluster.secret"
    secret.write_text("private-files-test-secret-0123456789abcdef\n")
    secret.chmod(0o600)
    return secret


def test_a_logic_module_on_its_own_refuses_a_readable_home_and_a_readable_database(tmp_path):
    # setup
    secret = _secret(tmp_path)
    loose_home = tmp_path / "loose"
    loose_home.mkdir(mode=0o755)
    loose_home.chmod(0o755)
    old_home = tmp_path / "old"
    (old_home / "lm").mkdir(parents=True, mode=0o700)
    old_home.chmod(0o700)
    (old_home / "lm" / "metadata.db").write_bytes(b"")
    (old_home / "lm" / "metadata.db").chmod(0o644)
    env = {"DATACLAY_CLUSTER_SECRET_FILE": str(secret), "DATACLAY_PORT": "0"}
    # run
    loose = _server("logicmodule.jar", {**env, "DATACLAY_HOME": str(loose_home)}, tmp_path)
    old = _server("logicmodule.jar", {**env, "DATACLAY_HOME": str(old_home)}, tmp_path)
    # verify
    assert loose.returncode == 2 and f"DATACLAY_HOME {loose_home} has mode 0755" in loose.stderr, loose.stderr
    assert list(loose_home.iterdir()) == []
    database = old_home / "lm" / "metadata.db"
    assert old.returncode == 3 and f"the metadata database {database} has mode 0644" in old.stderr, old.stderr
    assert f"run `chmod 600 {database}`" in old.stderr
    assert sorted(p.name for p in (old_home / "lm").iterdir()) == ["metadata.db"]


def test_a_data_service_on_its_own_refuses_a_pool_directory_another_user_made(tmp_path):
    # setup: a backend started by hand, with the default-style pool path the stranger made first
    secret = _secret(tmp_path)
    home = tmp_path / "home"
    planted = _plant(pathlib.Path(tempfile.mktemp(prefix="dataclay-planted-", dir="/dev/shm")))
    env = {"DATACLAY_CLUSTER_SECRET_FILE": str(secret), "DATACLAY_HOME": str(home), "DATACLAY_PORT": "1",
           "DATACLAY_BACKEND_NAME": "alone", "DATACLAY_PYTHON": "none", "DATACLAY_STORE_SIZE": "64M",
           "DATACLAY_STORE_PATH": str(planted / "alone")}
    try:
        # run
        refused = _server("dataservice.jar", env, tmp_path)
        # verify: its own directories are made private; the pool is refused before anything is written
        assert refused.returncode == 2
        assert f"is inside {planted}, which uid {STRANGER} owns" in refused.stderr, refused.stderr
        assert sorted(p.name for p in planted.iterdir()) == ["bait"]
        assert _not_private(home) == []
    finally:
        shutil.rmtree(planted)


# ---- Slurm ------------------------------------------------------------------------------------

def _job(tmp_path: pathlib.Path, pools: pathlib.Path) -> JobDir:
    job = JobDir(tmp_path / "job")
    job.create()
    job.make_credentials()
    job.save(JobPlan(job_id="77", lm_node="n1", backend_nodes=["n1"], store="kv", store_size="64M",
                     pool_dir=str(pools), node_tag="feedfacefeedface"))
    return job


def _node(job: JobDir) -> subprocess.CompletedProcess:
    """The wrapper of a backend on node n1, as srun would start it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATACLAY_", "SLURM"))}
    env["SLURMD_NODENAME"] = "n1"
    return subprocess.run([sys.executable, "-m", "dataclay._internal.cli.slurm.slurm", "node", "backend", str(job.path)],
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)


def test_a_slurm_node_refuses_a_directory_another_user_made_under_its_name_and_leaves_it(tmp_path):
    # setup: the stranger made the node's directory, with the job's exact name, before the job
    pools = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-slurm-pools-", dir="/dev/shm"))
    job = _job(tmp_path, pools)
    planted = _plant(pools / "dataclay-job77-n1-feedfacefeedface")
    try:
        # run
        refused = _node(job)
        # verify: the server never started; the directory is left for the Epilog, as it was
        assert refused.returncode != 0
        assert f"the node-local directory {planted} is owned by uid {STRANGER}" in refused.stdout, refused.stdout
        assert sorted(p.name for p in planted.iterdir()) == ["bait"] and _mode(planted) == 0o777
        done = json.loads(job.done_file("backend-n1").read_text())
        assert done["erased"] == [] and any("not made by this job" in f for f in done["failures"])
    finally:
        shutil.rmtree(pools)


def test_a_slurm_node_refuses_a_pool_directory_others_may_write(tmp_path):
    # setup: --pool-dir names a directory anyone may write (no sticky bit): they could swap the node's
    pools = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-slurm-pools-", dir="/dev/shm"))
    pools.chmod(0o777)
    job = _job(tmp_path, pools)
    try:
        # run
        refused = _node(job)
        # verify
        assert refused.returncode != 0
        assert f"is inside {pools} (mode 0777), which others may write without the sticky bit" in refused.stdout, \
            refused.stdout
        assert list(pools.iterdir()) == []
    finally:
        shutil.rmtree(pools)


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="the Epilog needs setpriv (util-linux)")
def test_the_epilog_erases_a_directory_another_user_made_under_the_jobs_name_without_following_its_links(tmp_path):
    # setup: the job's own directory, one the stranger made (unreadable even, with a link to a
    # file of root's inside), another job's, and a link named like the job's, in a directory like
    # /dev/shm (sticky, everybody may write)
    shm = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-epilog-", dir="/dev/shm"))
    shm.chmod(0o1777)
    own = shm / "dataclay-job88-n1-0123456789abcdef"
    own.mkdir(mode=0o700)
    (own / "pool").write_bytes(b"job data")
    victim = tmp_path / "victim.txt"
    victim.write_text("root's file")
    planted = _plant(shm / "dataclay-job88-n1")
    (planted / "link").symlink_to(victim)
    os.lchown(planted / "link", STRANGER, STRANGER)
    planted.chmod(0o000)
    other = shm / "dataclay-job888-n1-aaaa"
    other.mkdir()
    link = shm / "dataclay-job88-n2-x"
    link.symlink_to(victim.parent)
    env = {**os.environ, "SLURM_JOB_ID": "88", "SLURM_JOB_UID": "0", "DATACLAY_EPILOG_POOL_DIRS": str(shm)}
    try:
        # run
        out = subprocess.run(["sh", str(EPILOG)], env=env, capture_output=True, text=True, timeout=60)
    finally:
        left = sorted(p.name for p in shm.iterdir())
        shutil.rmtree(shm)
    # verify
    assert out.returncode == 0
    assert left == ["dataclay-job88-n2-x", "dataclay-job888-n1-aaaa"], out.stdout
    assert f"erased {own} (the job's; 1 files overwritten with zeros, then removed)" in out.stdout, out.stdout
    assert f"erased {planted} (owned by uid {STRANGER}, not the job's user: made by someone else; 1 files " \
           f"overwritten with zeros, then removed)" in out.stdout, out.stdout
    assert victim.read_text() == "root's file"
