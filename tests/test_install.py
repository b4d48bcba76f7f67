"""pmclay installed the way Python users install things: the wheel `make build` writes, `pip install`ed
into a fresh virtualenv (its dependencies from PyPI), then the tour run from that virtualenv alone:
start a local cluster, register a model from a directory, store an object under an alias in one
process, read it by alias and call its method in another, stop. Nothing of the source tree is on
the path, so a file the wheel lacks fails here.

The virtualenv and the model live under .test-venvs/ in the worktree, not under /tmp: the backend
runs model code with the virtualenv's interpreter inside a sandbox that hides /tmp. The cluster has
its own DATACLAY_HOME, port and pools, as every integration test's."""
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile

import pytest

from dataclay._internal.version import DISTRIBUTION, VERSION

REPO = pathlib.Path(__file__).resolve().parents[1]
JARS = REPO / "pyclay" / "dataclay" / "_internal" / "jars"
SCRATCH = REPO / ".test-venvs"
TOUR_MODEL = REPO / "pyclay" / "tests" / "typed_usage" / "tour"  # the tour's Person, which test_types checks
WHEEL_NAME = f"{DISTRIBUTION}-{VERSION}-py3-none-any.whl"

pytestmark = pytest.mark.timeout(300)

WRITER = '''
from dataclay import api
api.init()
from tour.people import Person
ada = Person("Ada", 36)
ada.make_persistent(alias="ada")
print(ada.getID())
api.finish()
'''

READER = '''
import dataclay
from dataclay import api
api.init()
from tour.people import Person
ada = Person.get_by_alias("ada")
print(ada.getID(), ada.name, ada.birthday(), dataclay.__file__)
api.finish()
'''


def _wheel() -> pathlib.Path:
    """The wheel `make build` wrote to dist/; the test fails when something it is built from changed since
    (a wheel built here, in the source tree, would race with make build and the other worker over build/lib)."""
    built = REPO / "dist" / WHEEL_NAME
    jars = [JARS / "logicmodule.jar", JARS / "dataservice.jar"]
    sources = [*jars, REPO / "setup.py", REPO / "pyproject.toml", *(REPO / "pyclay" / "dataclay").rglob("*.py"),
               *(REPO / "pyclay" / "storage").rglob("*.py")]
    missing = [str(p) for p in [built, *jars] if not p.is_file()]
    if missing:
        pytest.fail(f"run `make build` first: {', '.join(missing)} missing")
    newer = [str(p.relative_to(REPO)) for p in sources if p.stat().st_mtime > built.stat().st_mtime]
    if newer:
        pytest.fail(f"run `make build` first: {built} is older than {', '.join(newer[:5])}")
    return built


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kill_servers(home: pathlib.Path) -> None:
    """SIGKILLs the servers cluster.json records that are still alive (after a failed stop)."""
    try:
        state = json.loads((home / "cluster.json").read_text())
    except (OSError, ValueError):
        return
    for record in [state["lm"], *state["backends"]]:
        pid = record.get("pid") or 0
        try:
            if pid and b"-jar" in pathlib.Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def test_the_wheel_carries_the_servers_and_the_protocol_but_no_tests_or_build_leftovers():
    # run
    names = zipfile.ZipFile(_wheel()).namelist()
    # verify
    assert "dataclay/_internal/jars/logicmodule.jar" in names
    assert "dataclay/_internal/jars/dataservice.jar" in names
    assert "dataclay/_internal/proto/logicmodule_pb2.py" in names
    assert "dataclay/_internal/proto/dataservice_pb2_grpc.py" in names
    assert "dataclay/py.typed" in names
    assert "dataclay/_internal/sandbox/__main__.py" in names  # run as a directory by the backends
    assert "storage/api.py" in names
    unwanted = [n for n in names if n.startswith(("tests/", "pyclay/")) or "__pycache__" in n or ".egg-info" in n
                or n.endswith((".jsa", ".pyc", ".new"))]
    assert unwanted == []
    entry_points = zipfile.ZipFile(_wheel()).read(f"{DISTRIBUTION}-{VERSION}.dist-info/entry_points.txt")
    assert b"dataclay = dataclay._internal.cli.cluster:main" in entry_points
    assert b"dataclaycmd = dataclay._internal.cli.admin.dataclaycmd:main" in entry_points


def test_the_tour_runs_from_a_fresh_virtualenv_with_the_wheel_installed(tmp_path):
    # setup: a virtualenv, the wheel and its dependencies from PyPI (pip's cache), a model directory
    SCRATCH.mkdir(exist_ok=True)
    scratch = SCRATCH / f"install-{uuid.uuid4().hex[:8]}"
    scratch.mkdir()
    home = tmp_path / "home"
    pools = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-pools-", dir="/dev/shm"))
    venv = scratch / "venv"
    bin_dir = venv / "bin"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DATACLAY_", "PYTHON", "VIRTUAL_ENV", "JAVA_HOME"))}
    env.update(PATH=os.pathsep.join([str(bin_dir), "/usr/local/bin", "/usr/bin", "/bin"]),
               DATACLAY_HOME=str(home), DATACLAY_PORT=str(_free_port()), DATACLAY_STORE_PATH=str(pools),
               DATACLAY_STORE_SIZE="64M",
               # as the harness's clusters: starved of CPU on a loaded machine, and no collection in between
               DATACLAY_UNREACHABLE_MS="5000", DATACLAY_GC_INTERVAL="0")
    timings = {}

    def run(*args, timeout=180, **extra):
        started = time.perf_counter()
        result = subprocess.run([str(a) for a in args], env={**env, **extra}, capture_output=True, text=True,
                                timeout=timeout, cwd=tmp_path)
        label = f"{pathlib.Path(str(args[0])).name} {args[1]}"
        timings[label if label not in timings else f"{label} (2)"] = round(time.perf_counter() - started, 2)
        assert result.returncode == 0, f"{args} failed:\n{result.stdout}\n{result.stderr}"
        return result

    try:
        wheel = _wheel()
        run(sys.executable, "-m", "venv", venv)
        run(bin_dir / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel, timeout=240)
        model = scratch / "model" / "tour"
        shutil.copytree(TOUR_MODEL, model, ignore=shutil.ignore_patterns("__pycache__"))
        client_env = {"PYTHONPATH": str(model.parent)}

        # run: the tour, every command from the virtualenv
        helped = run(bin_dir / "dataclay", "--help")
        started = run(bin_dir / "dataclay", "start")
        user = dict(line.split("=", 1) for line in (home / "client.properties").read_text().splitlines()
                    if "=" in line and not line.startswith("#"))["DATACLAY_USER"]
        run(bin_dir / "dataclaycmd", "NewModel", user, "-", "tour", model.parent, "python")
        written = run(bin_dir / "python", "-c", WRITER, **client_env)
        read = run(bin_dir / "python", "-c", READER, **client_env)
        stopped = run(bin_dir / "dataclay", "stop")

        # verify
        assert "start" in helped.stdout and "stop" in helped.stdout
        assert "dataClay is running" in started.stdout and "store kv" in started.stdout
        assert started.stderr == ""  # no note: Java, PMDK and confinement are all there, nothing rival installed
        object_id = written.stdout.strip()
        assert uuid.UUID(object_id)
        read_id, name, age, module = read.stdout.split()
        assert (read_id, name, age) == (object_id, "Ada", "37")
        assert pathlib.Path(module).is_relative_to(venv), f"dataclay imported from {module}, not the virtualenv"
        assert "stopped backend-1, logicmodule" in stopped.stdout
        print(f"\ninstall and tour timings (s): {timings}")
    finally:
        if (bin_dir / "dataclay").exists():
            subprocess.run([str(bin_dir / "dataclay"), "stop"], env=env, capture_output=True, timeout=120,
                           cwd=tmp_path)
        _kill_servers(home)
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(pools, ignore_errors=True)
