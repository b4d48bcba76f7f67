"""A dataClay cluster spread over the hosts of a HostNetwork, started with the commands of the
README's "Deploying on several nodes" and nothing else: the Logic Module on one host, one Data
Service per backend host, clients on hosts of their own, every server advertising its host name.

Each host has a home directory of its own (its $HOME: the Logic Module's embedded database, a
backend's directory) and its pool under /dev/shm; the cluster secret and the administrator's
password file sit in a directory every host sees, as on a shared file system."""
from __future__ import annotations

import contextlib
import os
import pathlib
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from harness.cluster import MODELS, REPO
from harness.hosts import Host, HostNetwork, end_process_group

from dataclay._internal import sandbox
from dataclay._internal.settings_table import DEFAULT_PORT

JARS = REPO / "pyclay" / "dataclay" / "_internal" / "jars"
BIN = pathlib.Path(sys.executable).parent
BACKEND_PORT = 6867
LM_PORT = DEFAULT_PORT
# How long a read or call on a host that went silent may take, against the default
# DATACLAY_UNREACHABLE_MS (1.2 s): the silence bound, then a re-route and a fresh connection.
# On an idle machine it takes 1.0-1.3 s (README, "When hosts fail"); with the suite's two heavy
# tests sharing 2 cores, up to about 2.3 s was seen. Without the bound it takes TCP's minutes.
FAILOVER_BOUND_S = 3 * 1.2

LM_COMMAND = 'exec java $DATACLAY_TEST_JVM -XX:SharedArchiveFile="$JARS/logicmodule.jsa" -jar "$JARS/logicmodule.jar"'
# the README's backend command, word for word but for the paths
BACKEND_COMMAND = ('DATACLAY_BACKEND_NAME=$(hostname) DATACLAY_BACKEND_HOST=$(hostname) '
                   f'DATACLAY_BACKEND_PORT={BACKEND_PORT} '
                   'exec java $DATACLAY_TEST_JVM -XX:SharedArchiveFile="$JARS/dataservice.jsa" '
                   '-jar "$JARS/dataservice.jar"')


class MultiHostCluster:
    """The Logic Module on `lm_host`, a backend on each of `backend_hosts`; always stop() it."""

    def __init__(self, network: HostNetwork, lm_host: str, backend_hosts: list[str], store: str = "kv",
                 store_size: str = "256M", extra_env: dict | None = None):
        self.network = network
        self.lm_host = network[lm_host]
        self.backend_hosts = [network[h] for h in backend_hosts]
        self.store = store
        self.store_size = store_size
        self.extra_env = dict(extra_env or {})
        self.shared = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-shared-"))
        self.pools = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-mh-pools-", dir="/dev/shm"))
        self.password = secrets.token_urlsafe(18)
        self.secret_file = self.shared / "cluster.secret"
        self.password_file = self.shared / "admin-password"
        for path, text in ((self.secret_file, secrets.token_urlsafe(48)), (self.password_file, self.password)):
            path.write_text(text + "\n")
            path.chmod(0o600)
        self.logs = self.shared / "logs"
        self.logs.mkdir()
        self.servers: dict[str, subprocess.Popen] = {}

    # ---- environments ------------------------------------------------------------------------

    def _base_env(self, host: Host) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DATACLAY_")}
        home = self.shared / "homes" / host.name
        home.mkdir(parents=True, exist_ok=True)
        # a node's own state: Java takes the home directory from the password database, not $HOME
        env.update({"HOME": str(home), "DATACLAY_HOME": str(home / ".dataclay"),
                    "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
                    "JARS": str(JARS), "DATACLAY_TEST_JVM": "-Xshare:auto -Xlog:cds=off"})
        return env

    def server_env(self, host: Host) -> dict:
        """What a server on `host` is started with (the README's variables)."""
        env = self._base_env(host)
        env.update({"DATACLAY_HOST": self.lm_host.name, "DATACLAY_PORT": str(LM_PORT),
                    "DATACLAY_CLUSTER_SECRET_FILE": str(self.secret_file),
                    # as in the local test clusters: collections run when a test asks
                    "DATACLAY_GC_INTERVAL": "0", "DATACLAY_HEARTBEAT_MS": "200"})
        env.update(self.extra_env)
        return env

    def client_env(self, host: Host | None = None) -> dict:
        """What a client program is started with: the Logic Module's host name and the administrator."""
        env = self._base_env(host or self.lm_host)
        env.update({"DATACLAY_HOST": self.lm_host.name, "DATACLAY_PORT": str(LM_PORT),
                    "DATACLAY_USER": "admin", "DATACLAY_PASSWORD": self.password,
                    "PYTHONPATH": os.pathsep.join(filter(None, [str(MODELS), os.environ.get("PYTHONPATH")]))})
        env.update({k: v for k, v in self.extra_env.items() if k == "DATACLAY_UNREACHABLE_MS"})
        return env

    # ---- lifecycle ---------------------------------------------------------------------------

    def start(self, timeout: float = 120) -> "MultiHostCluster":
        """Starts the Logic Module, then every backend, and waits until all are alive."""
        self.start_logic_module()
        for host in self.backend_hosts:
            self.start_backend(host)
        self.wait_for_backends(len(self.backend_hosts), timeout)
        return self

    def start_logic_module(self) -> None:
        env = self.server_env(self.lm_host)
        env["DATACLAY_USER"] = "admin"
        self._launch("logicmodule", self.lm_host, LM_COMMAND, env, stdin=self.password_file)
        self.client("WaitForDataClayToBeAlive", "120", "0.5", host=self.lm_host, timeout=90)

    def start_backend(self, host: Host) -> None:
        env = self.server_env(host)
        env.update({"DATACLAY_STORE": self.store, "DATACLAY_STORE_PATH": str(self.pools / host.name),
                    "DATACLAY_STORE_SIZE": self.store_size, "DATACLAY_PYTHON": sys.executable,
                    "DATACLAY_EE_LAUNCHER": sandbox.LAUNCHER,
                    "PMEM_IS_PMEM_FORCE": "1"})
        self._launch(host.name, host, BACKEND_COMMAND, env)

    def _launch(self, name: str, host: Host, command: str, env: dict, stdin: pathlib.Path | None = None) -> None:
        log = open(self.logs / f"{name}.log", "ab")
        with contextlib.ExitStack() as files:
            files.enter_context(log)
            source = files.enter_context(open(stdin, "rb")) if stdin else subprocess.DEVNULL
            self.servers[name] = host.popen(["sh", "-c", command], env=env, stdin=source, stdout=log,
                                            stderr=subprocess.STDOUT)

    def wait_for_backends(self, n: int, timeout: float = 120) -> None:
        """`dataclaycmd WaitForBackends python n`, on the Logic Module's host."""
        deadline = time.monotonic() + timeout
        while True:
            result = self.client("WaitForBackends", "python", str(n), host=self.lm_host, check=False,
                                 timeout=timeout)
            if result.returncode == 0:
                return
            dead = [name for name, p in self.servers.items() if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                raise RuntimeError(f"backends did not come up (ended: {dead}):\n{result.stderr}\n{self.log_tail()}")

    def register_models(self, namespace: str = "tests", path: pathlib.Path = MODELS) -> None:
        """Registers the test models as the administrator, from the Logic Module's host."""
        self.client("NewModel", "admin", "-", namespace, str(path), "python", host=self.lm_host)

    def client(self, *args: str, host: Host | None = None, check: bool = True, timeout: float = 120
               ) -> subprocess.CompletedProcess:
        """`dataclaycmd args...` on `host` (default: the Logic Module's)."""
        host = host or self.lm_host
        return host.run([str(BIN / "dataclaycmd"), *args], env=self.client_env(host), check=check, timeout=timeout)

    def run_python(self, host: Host, code: str, *args: str, timeout: float = 120, check: bool = True
                   ) -> subprocess.CompletedProcess:
        """Runs `code` as a client program on `host` to its end."""
        return host.run([sys.executable, "-c", code, *args], env=self.client_env(host), timeout=timeout, check=check)

    def popen_python(self, host: Host, code: str, *args: str, stdin=None) -> subprocess.Popen:
        """Starts `code` as a client program on `host` (stdout and stderr piped, text)."""
        return host.popen([sys.executable, "-c", code, *args], env=self.client_env(host), stdin=stdin,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    # ---- failures ----------------------------------------------------------------------------

    def kill(self, name: str) -> None:
        """SIGKILLs a server (with its execution environment) and waits for it."""
        process = self.servers[name]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)

    def restart_backend(self, host: Host) -> None:
        """Starts the backend of `host` again (after kill()) and waits until it is alive."""
        self.start_backend(host)

    # ---- end ---------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stops every server (SIGTERM, then SIGKILL) and removes the pools and the shared directory."""
        for process in self.servers.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGCONT)
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.servers.values():
            end_process_group(process)
        shutil.rmtree(self.pools, ignore_errors=True)
        shutil.rmtree(self.shared, ignore_errors=True)

    def log_tail(self, lines: int = 40) -> str:
        out = []
        for log in sorted(self.logs.glob("*.log")):
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"---- {log.name}\n" + "\n".join(tail))
        return "\n".join(out)
