"""Starts and stops a whole local cluster: one Logic Module and N Data Service backends (each
supervising its Python execution environment), as detached processes logging to $DATACLAY_HOME/logs.

Everything it makes is its user's alone (directories 0700, files 0600, the servers started with
umask 077), and it refuses a home, a pool directory or anything dataClay keeps in them that another
user owns or could reach (see private_paths.py); the servers check their own directories too."""
from __future__ import annotations

import os
import pathlib
import secrets
import subprocess
import sys
import time

from dataclay._internal import sandbox
from dataclay.exceptions import (BackendUnavailableError, DataClayException, InvalidArgumentError,
                                 NotAuthenticatedError)
from dataclay._internal.cli.common import class_archives, erasure, placement, progress
from dataclay._internal.cli.local import prerequisites
from dataclay._internal.cli.snapshot import snapshot_signing as signing
from dataclay._internal.cli.local.certificates import ClusterCertificates
from dataclay._internal.cli.common.cluster_state import (
    ClusterState, ProcessRecord, free_port, port_in_use, read_properties, write_private)
from dataclay._internal.cli.common.settings import ClusterSettings
from dataclay._internal import engines
from dataclay._internal.private_paths import check_private_dir, check_tree, ensure_private_dir, open_private
from dataclay._internal.rpc import LogicModuleClient
from dataclay._internal.rpc.tls import ClusterCa

START_TIMEOUT = 90.0  # default of `dataclay start --timeout`: how long each server may take to come up
STOP_TIMEOUT = 20.0  # default of `dataclay stop --timeout`: how long a server may take to stop before SIGKILL
LM_JAR = "logicmodule.jar"
DS_JAR = "dataservice.jar"
# what dataClay keeps in DATACLAY_HOME, checked at every start; anything else there is the user's own
HOME_ENTRIES = (*erasure.HOME_ENTRIES, signing.KEY_FILE, signing.PUBLIC_FILE, "slurm")
SERVER_UMASK = 0o077  # whatever a server or its environment makes without naming a mode is its user's alone


class StartError(DataClayException):
    """A server of the local cluster did not come up; the message holds the end of its log."""

    code = "INTERNAL"


class LocalCluster:
    """The cluster whose state lives in one DATACLAY_HOME."""

    def __init__(self, settings: ClusterSettings):
        self.settings = settings
        self.home = settings.home
        self.logs = self.home / "logs"
        self.client_file = self.home / "client.properties"
        self.certificates = ClusterCertificates(self.home / "tls", settings.ca_key_dir)
        self._spawned: dict[int, subprocess.Popen] = {}
        self.notes: list[str] = []  # what a start found and worked around, for the user to read
        self._secret_file: pathlib.Path | None = None
        self._metrics_env: dict[str, str] = {}
        self._tls: ClusterCa | None = None
        self.start_timeout = START_TIMEOUT

    # ---- start -------------------------------------------------------------------------------

    def start(self, backends: int | None = None, store: str | None = None,
              metadata: str | None = None, tls: bool = False, timeout: float = START_TIMEOUT) -> ClusterState:
        """Starts whatever is not running, waiting up to `timeout` seconds for each step; a second start
        reuses the same pools and metadata, and keeps TLS on (with the same CA) once a start asked for it."""
        if not timeout > 0:
            raise InvalidArgumentError(f"--timeout must be a positive number of seconds, not {timeout}")
        self.start_timeout = timeout
        if backends is not None and not 1 <= backends <= 64:
            raise InvalidArgumentError(f"--backends must be between 1 and 64, not {backends}")
        prerequisites.check_java(self.settings.java, self.settings.java_from)  # before anything is made
        self.check_home(create=True)
        ensure_private_dir(self.logs, "the log directory")
        state = ClusterState.load(self.home)
        wanted = max(backends or 0, len(state.backends) if state else 0, 1)
        for index in range(wanted):  # a DATACLAY_CPUS naming CPUs out of reach: said before anything is recorded
            placement.cpus_for(self.settings.cpus, index)
        state = self._reconcile(state, store, metadata)
        self._own_pools(state)
        self.notes += filter(None, [prerequisites.confinement_problem(self.settings.server_env({})),
                                    prerequisites.rival_distribution()])
        self._secure(state, tls)
        user, password = self._administrator(state)
        self._secret_file = self._cluster_secret()
        self._metrics_env = self._metrics_token()
        self._start_logic_module(state, user, password)
        for index in range(len(state.backends), wanted):
            state.backends.append(ProcessRecord(name=f"backend-{index + 1}", port=0, jar=DS_JAR))
        for record in state.backends:
            self._start_backend(state, record)
        self._wait_for_backends(state, user, password)
        return state

    def _reconcile(self, state: ClusterState | None, store: str | None, metadata: str | None) -> ClusterState:
        engine = engines.engine(store, "--store").name if store else self.settings.store
        chosen = engine or (state.store if state else None)
        if chosen and engines.engine(chosen).database and not self.settings.passthrough.get("DATACLAY_STORE_URL"):
            raise InvalidArgumentError(
                f"the {chosen} engine needs DATACLAY_STORE_URL, the JDBC URL of its database "
                "(e.g. jdbc:postgresql://127.0.0.1:5432/dataclay?user=postgres)")
        url = metadata or self.settings.metadata_url
        if url is not None and not url.startswith("jdbc:"):
            raise InvalidArgumentError(f"--metadata must be a JDBC URL such as jdbc:postgresql://host/db, not {url!r}")
        # before a new cluster's engine is recorded: a start refused for a missing PMDK leaves the
        # user free to choose another engine
        prerequisites.check_engine(state.store if state else engine or engines.default_engine().name,
                                   existing_cluster=str(self.home) if state else None)
        if state is None:
            root = self.settings.store_path or self.settings.new_store_root()
            state = ClusterState(store=engine or engines.default_engine().name, store_root=str(root), store_size=self.settings.store_size,
                                 metadata_url=url, lm=ProcessRecord(name="logicmodule", port=self.settings.port,
                                                                    jar=LM_JAR),
                                 store_root_chosen=self.settings.store_path is None)
            state.save(self.home)
            return state
        if state.store_root == str(self.settings.legacy_store_root()):
            state.store_root_chosen = True  # an earlier release chose it: a predictable name
        if engine and engine != state.store:
            raise InvalidArgumentError(
                f"the cluster in {self.home} stores objects with the {state.store!r} engine; start it with "
                f"--store {state.store}, or use another DATACLAY_HOME for a {engine!r} cluster")
        if url and url != state.metadata_url:
            raise InvalidArgumentError(
                f"the cluster in {self.home} keeps its metadata in {state.metadata_url or 'the embedded database'}; "
                f"use another DATACLAY_HOME for a cluster on {url}")
        return state

    def check_home(self, create: bool = False) -> bool:
        """Refuses a DATACLAY_HOME, or anything dataClay keeps in it, that another user owns or
        could reach (makes the home, mode 0700, when `create`); False when there is no home."""
        if not create and not os.path.lexists(self.home):
            return False
        if create:
            ensure_private_dir(self.home, "DATACLAY_HOME")
        else:
            check_private_dir(self.home, "DATACLAY_HOME")
        check_tree(self.home, "DATACLAY_HOME", HOME_ENTRIES)
        return True

    def _own_pools(self, state: ClusterState) -> None:
        """Makes or checks the pools' directory and everything in it. One the launcher chose that
        is gone (a reboot emptied /dev/shm) gets a new random name, and so does one another user
        made under its name meanwhile (anyone may list /dev/shm): what it held is gone either way,
        and the other user's directory is left untouched."""
        if not engines.engine(state.store).pool_directory:
            return
        root = pathlib.Path(state.store_root)
        if state.store_root_chosen and (not os.path.lexists(root) or os.lstat(root).st_uid != os.geteuid()):
            if os.path.lexists(root):
                self.notes.append(f"the pools' directory {root} is not yours (uid {os.lstat(root).st_uid} made it "
                                  f"after yours was gone): not used, and left as it is")
            root = self.settings.new_store_root()
            state.store_root = str(root)
            state.save(self.home)
        what = "the pools' directory" + ("" if state.store_root_chosen else " (DATACLAY_STORE_PATH)")
        ensure_private_dir(root, what)
        check_tree(root, what)

    def _secure(self, state: ClusterState, tls: bool) -> None:
        """Turns TLS on when asked (only while nothing runs in plaintext) and makes the cluster CA."""
        if tls and not state.tls:
            running = [r.name for r in (state.lm, *state.backends) if r.running()]
            if running:
                raise InvalidArgumentError(
                    f"the cluster in {self.home} is running without TLS ({', '.join(running)}): stop it with "
                    f"`dataclay stop`, then `dataclay start --tls`")
            state.tls = True
            state.save(self.home)
        if state.tls:
            self.certificates.ensure_ca()
            self._tls = ClusterCa.read(str(self.certificates.ca_file))

    def _tls_env(self, server: str) -> dict[str, str]:
        """What server `server` needs for TLS: the CA and its own certificate and key (paths only)."""
        if self._tls is None:
            return {}
        pair = self.certificates.server(server)
        return {"DATACLAY_TLS_CA": str(self.certificates.ca_file), "DATACLAY_TLS_CERT": str(pair.cert),
                "DATACLAY_TLS_KEY": str(pair.key)}

    def _administrator(self, state: ClusterState) -> tuple[str, str]:
        """The administrator the servers use; creates client.properties (mode 0600) for local clients."""
        s = self.settings
        recorded = read_properties(self.client_file)
        if s.user and s.password:
            user, password, keep_password = s.user, s.password, False
        elif recorded.get("DATACLAY_USER") and recorded.get("DATACLAY_PASSWORD"):
            user, password, keep_password = recorded["DATACLAY_USER"], recorded["DATACLAY_PASSWORD"], True
        else:
            user, password, keep_password = s.user or "admin", secrets.token_urlsafe(24), True
        lines = ["# Written by `dataclay start`: how local clients reach this cluster.",
                 "DATACLAY_HOST=127.0.0.1", f"DATACLAY_PORT={s.port}", f"DATACLAY_USER={user}"]
        if state.tls:
            lines.append(f"DATACLAY_TLS_CA={self.certificates.ca_file}")
        if keep_password:
            lines.append(f"DATACLAY_PASSWORD={password}")
        write_private(self.client_file, "\n".join(lines) + "\n")
        return user, password

    def _cluster_secret(self) -> pathlib.Path:
        """The file of the secret the servers share (backends prove they know it to the Logic Module):
        DATACLAY_CLUSTER_SECRET_FILE when set, else $DATACLAY_HOME/cluster.secret, made on first start."""
        given = self.settings.passthrough.get("DATACLAY_CLUSTER_SECRET_FILE")
        if given:
            return pathlib.Path(given).expanduser().resolve()
        path = self.home / "cluster.secret"
        if not path.exists():
            write_private(path, secrets.token_urlsafe(48) + "\n")
        return path

    def _metrics_token(self) -> dict[str, str]:
        """With metrics on and no DATACLAY_METRICS_TOKEN_FILE given: $DATACLAY_HOME/metrics.token (mode
        0600, made on first need), which every scrape must then present, so that the machine's other
        users cannot read the cluster's figures or make its servers count on their behalf."""
        if self.settings.metrics_port is None or self.settings.passthrough.get("DATACLAY_METRICS_TOKEN_FILE"):
            return {}
        path = self.home / "metrics.token"
        if not path.exists():
            write_private(path, secrets.token_hex(32) + "\n")
        return {"DATACLAY_METRICS_TOKEN_FILE": str(path)}

    def _start_logic_module(self, state: ClusterState, user: str, password: str) -> None:
        lm = state.lm
        if lm.running():
            return
        lm.port = self.settings.port
        if port_in_use(lm.port):
            raise StartError(f"port {lm.port} is already in use (another dataClay?); set DATACLAY_PORT to a free port")
        env = self.settings.server_env({"DATACLAY_PORT": str(lm.port), "DATACLAY_HOME": str(self.home),
                                "DATACLAY_USER": user,
                                "DATACLAY_CLUSTER_SECRET_FILE": str(self._secret_file),
                                **self._tls_env("logicmodule")})
        if state.metadata_url:
            env["DATACLAY_METADATA_URL"] = state.metadata_url
        if self.settings.metrics_port is not None:
            env["DATACLAY_METRICS_PORT"] = str(self.settings.metrics_port)
            env.update(self._metrics_env)
        # the administrator's password goes on standard input: never into an environment or a command line
        lm.pid = self._spawn(LM_JAR, env, self.logs / "logicmodule.log", stdin_line=password)
        state.save(self.home)
        deadline = time.monotonic() + self.start_timeout
        # the port first: a gRPC channel refused while the JVM starts backs off, and would then
        # see the Logic Module up to its longest backoff late
        while not port_in_use(lm.port):
            if self._ended(lm):
                raise StartError(self._died("the Logic Module", self.logs / "logicmodule.log"))
            if time.monotonic() > deadline:
                raise StartError(self._died("the Logic Module (port never opened)", self.logs / "logicmodule.log"))
            time.sleep(0.05)
        client = LogicModuleClient(f"127.0.0.1:{lm.port}", tls=self._tls)
        try:
            while True:
                try:
                    client.health(timeout=1.0)
                    return
                except DataClayException as e:
                    if self._ended(lm):
                        raise StartError(self._died("the Logic Module", self.logs / "logicmodule.log"))
                    if time.monotonic() > deadline:
                        raise StartError(self._died(f"the Logic Module (no answer: {e})",
                                                    self.logs / "logicmodule.log"))
                    time.sleep(0.1)
        finally:
            client.close()

    def _start_backend(self, state: ClusterState, record: ProcessRecord) -> None:
        if record.running():
            return
        taken = {state.lm.port} | {b.port for b in state.backends if b is not record} | self._metrics_ports(state)
        if record.port == 0 or port_in_use(record.port) or record.port in taken:
            record.port = free_port(taken)
        pool = pathlib.Path(state.store_root) / record.name
        env = self.settings.server_env({
            "DATACLAY_HOST": "127.0.0.1", "DATACLAY_PORT": str(state.lm.port),
            "DATACLAY_CLUSTER_SECRET_FILE": str(self._secret_file), "DATACLAY_HOME": str(self.home),
            "DATACLAY_BACKEND_NAME": record.name, "DATACLAY_BACKEND_HOST": "127.0.0.1",
            "DATACLAY_BACKEND_PORT": str(record.port),
            "DATACLAY_BACKEND_DIR": str(self.home / "backends" / record.name),
            "DATACLAY_STORE": state.store, "DATACLAY_STORE_PATH": str(pool),
            "DATACLAY_STORE_SIZE": state.store_size, "DATACLAY_PYTHON": sys.executable,
            "DATACLAY_EE_LAUNCHER": sandbox.LAUNCHER,
            **self._tls_env(record.name),
        })
        if self.settings.metrics_port is not None:
            env["DATACLAY_METRICS_PORT"] = str(self._metrics_port(state, record))
            env.update(self._metrics_env)
        if self.settings.store_key_file is not None:
            # the path only: the Data Service reads the key itself (and the Logic Module never sees it)
            env["DATACLAY_STORE_KEY_FILE"] = str(self.settings.store_key_file)
        if str(pool).startswith("/dev/shm/"):
            env.setdefault("PMEM_IS_PMEM_FORCE", "1")  # DRAM-backed emulation: flushes need no msync
        cpus = placement.cpus_for(self.settings.cpus, state.backends.index(record))
        with placement.placed(cpus):
            record.pid = self._spawn(DS_JAR, env, self.logs / f"{record.name}.log")
        state.save(self.home)

    def _metrics_port(self, state: ClusterState, record: ProcessRecord) -> int:
        """Backend i's metrics port: DATACLAY_METRICS_PORT + i + 1 (0: any free port)."""
        base = self.settings.metrics_port
        if not base:
            return 0
        port = base + state.backends.index(record) + 1
        if port > 65535 or port == state.lm.port:
            raise StartError(f"DATACLAY_METRICS_PORT={base} gives {record.name} the port {port}, "
                             f"{'which is no port' if port > 65535 else 'the Logic Module port (DATACLAY_PORT)'}: "
                             f"choose a port with {len(state.backends)} free ones after it")
        return port

    def _metrics_ports(self, state: ClusterState) -> set[int]:
        """The metrics ports of the Logic Module and every backend (none unless metrics are on)."""
        base = self.settings.metrics_port
        return set(range(base, base + len(state.backends) + 1)) if base else set()

    def _wait_for_backends(self, state: ClusterState, user: str, password: str) -> None:
        client = LogicModuleClient(f"127.0.0.1:{state.lm.port}", tls=self._tls)
        deadline = time.monotonic() + self.start_timeout
        try:
            client.token = _answered(lambda: client.new_session(user, password, "").token, deadline,
                                     "the Logic Module", self.start_timeout)
        except NotAuthenticatedError as e:
            raise StartError(
                f"the Logic Module refused the administrator {user!r} ({e}); its metadata already holds that "
                f"account with another password: set DATACLAY_USER/DATACLAY_PASSWORD to it") from None
        names = {b.name for b in state.backends}
        try:
            with progress.bar("waiting for backends", total=len(names), unit="backend") as shown:
                self._await_alive(state, client, names, deadline, shown)
        finally:
            client.close_session()
            client.close()

    def _await_alive(self, state: ClusterState, client, names: set, deadline: float, shown) -> None:
        while True:
            # the Logic Module still calls a backend that was just killed alive for a heartbeat
            # or two: a restarted one is up once its own port answers as well
            alive = {b.name for b in _answered(client.get_backends, deadline, "the Logic Module",
                                          self.start_timeout)
                     if b.alive and b.port == _port_of(state, b.name) and port_in_use(b.port)}
            shown.update(len(names & alive) - shown.n)
            if names <= alive:
                return
            for record in state.backends:
                if self._ended(record):
                    raise StartError(self._died(f"backend {record.name}", self.logs / f"{record.name}.log"))
            if time.monotonic() > deadline:
                missing = ", ".join(sorted(names - alive))
                raise StartError(f"backends {missing} did not register within {self.start_timeout:g} s; "
                                 f"see {self.logs} (`dataclay logs`), or wait longer with --timeout SECONDS")
            time.sleep(0.1)

    def _spawn(self, jar: str, env: dict[str, str], log: pathlib.Path, stdin_line: str | None = None) -> int:
        jar_path = self.settings.jars / jar
        if not jar_path.is_file():
            raise StartError(f"{jar_path} is missing: run `make build` (or set DATACLAY_JARS)")
        with os.fdopen(open_private(log), "ab") as out:
            out.write(f"==== {time.strftime('%Y-%m-%d %H:%M:%S')} starting {jar}\n".encode())
            out.flush()
            proc = subprocess.Popen(self.java_command(jar_path),
                                    env=env, stdin=subprocess.DEVNULL if stdin_line is None else subprocess.PIPE,
                                    stdout=out, stderr=subprocess.STDOUT, cwd=self.home, start_new_session=True,
                                    umask=SERVER_UMASK)
        if stdin_line is not None:
            try:
                proc.stdin.write((stdin_line + "\n").encode())
                proc.stdin.close()
            except OSError:
                pass  # it died at once: the start reports it with its log
        self._spawned[proc.pid] = proc
        return proc.pid

    def java_command(self, jar_path: pathlib.Path) -> list[str]:
        """The command line that starts the server in `jar_path`."""
        return [self.settings.java, *self.settings.java_opts,
                *class_archives.jvm_options(jar_path, self.settings.class_archives), "-jar", str(jar_path)]

    def _ended(self, record: ProcessRecord) -> bool:
        """Whether a server process is gone. One this launcher spawned is asked directly: just after
        the spawn its /proc entry may not show the java command line yet (the launcher re-executes)."""
        proc = self._spawned.get(record.pid)
        return proc.poll() is not None if proc is not None else not record.running()

    @staticmethod
    def _died(what: str, log: pathlib.Path) -> str:
        try:
            tail = log.read_text(errors="replace").splitlines()[-15:]
        except OSError:
            tail = []
        return f"{what} failed to start; last lines of {log}:\n" + "\n".join(tail)

    # ---- stop --------------------------------------------------------------------------------

    def stop(self, timeout: float = STOP_TIMEOUT) -> list[str]:
        """Stops every recorded process (backends first, then the Logic Module), each SIGKILLed if it is not
        gone after `timeout` seconds; returns what it stopped."""
        if not self.check_home():
            return []
        state = ClusterState.load(self.home)
        if state is None:
            return []
        stopped = []
        running = [b for b in state.backends if b.running()]
        for record in running:
            record.terminate()
        for record in running:
            record.wait_or_kill(timeout)
            stopped.append(record.name)
        if state.lm.running():
            state.lm.terminate()
            state.lm.wait_or_kill(timeout)
            stopped.append(state.lm.name)
        for record in state.backends:
            record.pid = 0
        state.lm.pid = 0
        state.save(self.home)
        return stopped


    # ---- erase -------------------------------------------------------------------------------

    def erase(self) -> list[str]:
        """Erases a stopped cluster: each backend's store (pool files overwritten with zeros, then
        removed; a postgres backend's rows deleted), then its state under DATACLAY_HOME. Returns what
        was erased, one line each. A store that cannot be erased stops it before DATACLAY_HOME is
        touched, so that cluster.json still says where the pools are for another try."""
        state = ClusterState.load(self.home) if self.check_home() else None
        if state is None:
            return [f"nothing to erase: no cluster was started with DATACLAY_HOME={self.home}"]
        running = [r.name for r in [state.lm, *state.backends] if r.running()]
        if running:
            raise erasure.EraseError(f"{', '.join(running)} still running; run `dataclay stop` first; nothing was erased")
        pools = {b.name: pathlib.Path(state.store_root) / b.name for b in state.backends}
        lines = [f"erased {line}" for line in erasure.erase_stores(
            self.settings.java, self.settings.jars / DS_JAR, pools, self.settings.server_env({"DATACLAY_STORE": state.store}))]
        root = pathlib.Path(state.store_root)
        if root.is_dir() and not any(root.iterdir()):
            root.rmdir()
        lines += [f"erased {line}" for line in self.certificates.erase_ca_key()]
        erased, left = erasure.erase_home(self.home)
        if erased:
            lines.append(f"erased {self.home}: " + ", ".join(erased) + " (overwritten with zeros, then removed)")
        if left:
            lines.append(f"left in {self.home} (not made by dataclay start): {', '.join(left)}")
        if state.metadata_url:
            lines.append(f"not erased: the metadata in {erasure.redact_url(state.metadata_url)} (another database)")
        return lines


def _port_of(state: ClusterState, name: str) -> int:
    return next(b.port for b in state.backends if b.name == name)


def _answered(call, deadline: float, server: str, seconds: float = START_TIMEOUT):
    """`call()`'s answer; a server too busy to answer in time (a slow machine: a start under load
    misses the liveness bound, DATACLAY_UNREACHABLE_MS) is asked again until `deadline`."""
    while True:
        try:
            return call()
        except BackendUnavailableError as e:
            if time.monotonic() > deadline:
                raise StartError(f"{server} did not answer within {seconds:g} s: {e}") from None
            time.sleep(0.2)
