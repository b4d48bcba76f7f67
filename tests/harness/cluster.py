"""A real local dataClay cluster for integration tests, driven through the `dataclay` and
`dataclaycmd` commands exactly as a user would, in its own DATACLAY_HOME, port and pools."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from contextlib import contextmanager

from dataclay._internal.processes import await_exit, runs
from harness.waiting import wait_until

REPO = pathlib.Path(__file__).resolve().parents[2]
MODELS = REPO / "tests" / "models"
BIN = pathlib.Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _command(name: str) -> str:
    path = BIN / name
    return str(path) if path.exists() else name


class Cluster:
    """One Logic Module and `backends` Data Services (`tls`: started with --tls); always stop() it
    (the fixture does)."""

    def __init__(self, backends: int = 2, store: str = "kv", metadata_url: str | None = None,
                 store_size: str = "256M", extra_env: dict | None = None, tls: bool = False):
        self.backends = backends
        self.store = store
        self.tls = tls
        self.metadata_url = metadata_url
        self.home = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-home-"))
        self.pools = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-pools-", dir="/dev/shm"))
        self.config = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-config-"))  # where --tls keeps the CA key
        self.port = _free_port()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("DATACLAY_")}
        self.env.update({
            "DATACLAY_HOME": str(self.home), "DATACLAY_PORT": str(self.port), "XDG_CONFIG_HOME": str(self.config),
            "DATACLAY_STORE_PATH": str(self.pools), "DATACLAY_STORE_SIZE": store_size,
            "DATACLAY_HEARTBEAT_MS": "200",
            # the suite runs many clusters at once on 2 cores, where a server can be starved of CPU
            # for more than the default 1.2 s: failover timing is tested on its own hosts
            # (test_failover.py, test_multihost.py, with the default)
            "DATACLAY_UNREACHABLE_MS": "5000",
            # tests that kill a backend restart it and expect it back as it was: replicas are
            # promoted only on the namespace hosts of test_failover.py
            "DATACLAY_PROMOTE_AFTER_MS": "60000",
            # tests pass unaliased objects between client processes by ID, which a collection
            # between the two would rightly remove: collections run when a test asks for one
            "DATACLAY_GC_INTERVAL": "0",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(MODELS), os.environ.get("PYTHONPATH")])),
        })
        self.env.update(extra_env or {})
        self.start_seconds: float | None = None  # how long the last start() took
        self.start_output = ""  # what the last start() printed, standard output then standard error

    # ---- lifecycle ---------------------------------------------------------------------------

    def start(self, timeout: float = 120) -> "Cluster":
        """`dataclay start` (also restarts whatever is down); fails with the servers' logs."""
        args = [_command("dataclay"), "start", "--backends", str(self.backends), "--store", self.store]
        if self.metadata_url:
            args += ["--metadata", self.metadata_url]
        if self.tls:
            args.append("--tls")
        started = time.perf_counter()
        result = subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            raise RuntimeError(f"dataclay start failed:\n{result.stdout}{result.stderr}\n{self.logs()}")
        self.start_seconds = time.perf_counter() - started
        self.start_output = result.stdout + result.stderr
        return self

    def stop_processes(self) -> None:
        """`dataclay stop`: a clean shutdown that keeps the home, the metadata and the pools."""
        result = subprocess.run([_command("dataclay"), "stop"], env=self.env, capture_output=True, text=True,
                                timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"dataclay stop failed:\n{result.stdout}{result.stderr}")

    def dataclay(self, *args: str) -> subprocess.CompletedProcess:
        """Runs the `dataclay` command against this cluster's home; never raises on failure."""
        return subprocess.run([_command("dataclay"), *args], env=self.env, capture_output=True, text=True,
                              timeout=180)

    def status(self) -> str:
        """What `dataclay status` prints."""
        return self.dataclay("status").stdout

    def stop(self) -> None:
        """`dataclay stop`, then SIGKILL anything left, then remove the home and the pools."""
        subprocess.run([_command("dataclay"), "stop"], env=self.env, capture_output=True, timeout=120)
        for pid in self.pids().values():
            _kill(pid)
        shutil.rmtree(self.home, ignore_errors=True)
        shutil.rmtree(self.pools, ignore_errors=True)
        shutil.rmtree(self.config, ignore_errors=True)

    def dataclaycmd(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run([_command("dataclaycmd"), *args], env=self.env, capture_output=True, text=True,
                                timeout=120)
        if check and result.returncode != 0:
            raise RuntimeError(f"dataclaycmd {' '.join(args)} failed:\n{result.stdout}{result.stderr}")
        return result

    def register_models(self, namespace: str = "tests", path: pathlib.Path = MODELS) -> None:
        """Registers the test models under tests/models as the administrator."""
        self.dataclaycmd("NewModel", self.admin_user(), "-", namespace, str(path), "python")

    # ---- facts -------------------------------------------------------------------------------

    def client_properties(self) -> dict[str, str]:
        values = {}
        for line in (self.home / "client.properties").read_text().splitlines():
            if "=" in line and not line.startswith("#"):
                key, value = line.split("=", 1)
                values[key] = value
        return values

    def admin_user(self) -> str:
        return self.client_properties()["DATACLAY_USER"]

    def admin_password(self) -> str:
        return self.client_properties()["DATACLAY_PASSWORD"]

    def state(self) -> dict:
        return json.loads((self.home / "cluster.json").read_text())

    def pids(self) -> dict[str, int]:
        """name -> pid of the recorded server processes that are alive."""
        try:
            state = self.state()
        except FileNotFoundError:
            return {}
        records = [state["lm"], *state["backends"]]
        return {r["name"]: r["pid"] for r in records if r["pid"] and runs(r["pid"])}

    def ee_pid(self, backend: str, start: bool = True) -> int:
        """The pid (as the host sees it: its sandbox's outer process) of an execution environment
        process of a backend (a child of its Data Service). Processes start at an account's first
        call: when there is none and `start`, the administrator calls a method there first."""
        ds = self.pids()[backend]
        children = [c for task in pathlib.Path(f"/proc/{ds}/task").iterdir()
                    for c in (task / "children").read_text().split()]
        for child in children:
            cmdline = pathlib.Path(f"/proc/{child}/cmdline").read_bytes()
            if b"dataclay._internal.ee" in cmdline:
                return int(child)
        if start:
            self.run_client(textwrap.dedent(f"""
                from dataclay import api
                api.init()
                from people.model import Counter
                backend = next(i for i, b in api.get_backends().items() if b.name == {backend!r})
                c = Counter(0); c.make_persistent(backend_id=backend); c.get()
            """))
            return self.ee_pid(backend, start=False)
        raise LookupError(f"{backend} has no execution environment process")

    def kill(self, name: str) -> None:
        """SIGKILL one server process (e.g. "logicmodule", "backend-1") and wait until it is gone."""
        _kill(self.pids()[name])

    def log_containing(self, name: str, text: str, timeout: float = 20) -> str:
        """The whole of logs/<name>.log once it holds `text`; AssertionError with the logs' tails after `timeout` s."""
        path = self.home / "logs" / f"{name}.log"

        def holding() -> str:
            content = path.read_text(errors="replace")
            return content if text in content else ""
        return wait_until(holding, timeout, f"{text!r} in {path.name}", interval=0.1, ignoring=(FileNotFoundError,),
                          details=self.logs)

    def logs(self) -> str:
        out = []
        for log in sorted((self.home / "logs").glob("*.log")) if (self.home / "logs").exists() else []:
            lines = log.read_text(errors="replace").splitlines()[-40:]
            out.append(f"---- {log.name}\n" + "\n".join(lines))
        return "\n".join(out)

    # ---- clients -----------------------------------------------------------------------------

    def run_client(self, code: str, *args: str, timeout: float = 120, check: bool = True
                   ) -> subprocess.CompletedProcess:
        """Runs `code` as a separate Python client process against this cluster."""
        result = subprocess.run([sys.executable, "-c", code, *args], env=self.env, capture_output=True,
                                text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise RuntimeError(f"client failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def popen_client(self, code: str, *args: str) -> subprocess.Popen:
        """Starts a client process and returns at once (stdout piped, text)."""
        return subprocess.Popen([sys.executable, "-c", code, *args], env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)


@contextmanager
def killed_at_exit(process: subprocess.Popen):
    """`process` for the with-block, killed and reaped at its end if it still runs: a test that fails
    half-way leaves no client behind."""
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def started_with_models(cluster):
    """`cluster` (a local Cluster or a MultiHostCluster) started with the test models registered;
    stopped again if either fails, so a failed start leaves no process behind."""
    try:
        cluster.start()
        cluster.register_models()
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    await_exit([pid], 10)
