"""What `dataclay start` launched, kept in $DATACLAY_HOME/cluster.json, and the client file it writes."""
from __future__ import annotations

import json
import os
import pathlib
import random
import signal
import socket
import tempfile
import time
from dataclasses import asdict, dataclass, field

from dataclay._internal import processes
from dataclay._internal.private_paths import ensure_private_dir
from dataclay.exceptions import DataClayException


@dataclass
class ProcessRecord:
    """One server process of the local cluster: where it listens and which pid runs it."""

    name: str
    port: int
    pid: int = 0
    jar: str = ""

    def running(self) -> bool:
        """True when the recorded pid is alive and still runs our jar (a reused pid does not count)."""
        if self.pid <= 0:
            return False
        try:
            cmdline = pathlib.Path(f"/proc/{self.pid}/cmdline").read_bytes()
        except OSError:
            return False
        if b"\0" + b"-jar" not in b"\0" + cmdline or self.jar.encode() not in cmdline:
            return False
        return processes.runs(self.pid)

    def terminate(self) -> None:
        """Asks the process to stop (SIGTERM): it closes its store cleanly."""
        if self.running():
            os.kill(self.pid, signal.SIGTERM)

    def wait_or_kill(self, timeout: float) -> bool:
        """Waits up to `timeout` seconds for the process to end, then SIGKILLs it. True if it ended by itself."""
        deadline = time.monotonic() + timeout
        clean = True
        while self.running():
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                clean = False
                deadline = float("inf")
            time.sleep(0.05)
        self.pid = 0
        return clean


@dataclass
class ClusterState:
    """The launched cluster: engine and pool settings are fixed by the first start; TLS, once on, stays on."""

    store: str
    store_root: str
    store_size: str
    metadata_url: str | None
    lm: ProcessRecord
    backends: list[ProcessRecord] = field(default_factory=list)
    tls: bool = False
    # the launcher chose store_root (DATACLAY_STORE_PATH was unset): once that directory is gone
    # (a reboot empties /dev/shm), the next start makes a new one under a new random name
    store_root_chosen: bool = False

    @staticmethod
    def path(home: pathlib.Path) -> pathlib.Path:
        return home / "cluster.json"

    @classmethod
    def load(cls, home: pathlib.Path) -> "ClusterState | None":
        """The recorded state, or None when this home has never started a cluster."""
        try:
            raw = json.loads(cls.path(home).read_text())
        except FileNotFoundError:
            return None
        return cls(
            store=raw["store"], store_root=raw["store_root"], store_size=raw["store_size"],
            metadata_url=raw.get("metadata_url"), lm=ProcessRecord(**raw["lm"]),
            backends=[ProcessRecord(**b) for b in raw["backends"]], tls=bool(raw.get("tls", False)),
            store_root_chosen=bool(raw.get("store_root_chosen", False)),
        )

    def save(self, home: pathlib.Path) -> None:
        """Writes the state atomically (a crash leaves the old or the new file)."""
        write_private(self.path(home), json.dumps(asdict(self), indent=2) + "\n")


def write_private(path: pathlib.Path, text: str) -> None:
    """Writes `text` to `path` readable only by its owner, atomically (temp file + rename); a
    missing directory is made mode 0700."""
    if not path.parent.exists():
        ensure_private_dir(path.parent, "directory")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        pathlib.Path(tmp).unlink(missing_ok=True)
        raise


def read_properties(path: pathlib.Path) -> dict[str, str]:
    """KEY=VALUE lines of a client file ('#' comments), or {} when it does not exist."""
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return {}
    values = {}
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            values[key.strip()] = value.strip()
    return values


_EPHEMERAL = pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range")
_LOWEST_PORT = 10000


def free_port(avoid: set[int] = frozenset(), address: str = "127.0.0.1") -> int:
    """A TCP port on `address` that nobody listens on now, for a server started next. It is drawn
    at random below the kernel's ephemeral range: a server's JVM binds it seconds later, and a port
    from that range (what binding port 0 gives) can meanwhile become the local end of any outgoing
    connection on the node, failing the server with "Address already in use"."""
    try:
        ephemeral = int(_EPHEMERAL.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral = 32768                         # Linux's default
    for _ in range(500):
        port = random.randrange(_LOWEST_PORT, ephemeral) if ephemeral > _LOWEST_PORT + 1000 else 0
        if port in avoid:
            continue
        with socket.socket() as s:
            try:
                s.bind((address, port))
            except OSError:
                continue
            port = s.getsockname()[1]
        if port not in avoid:
            return port
    raise DataClayException(f"found no free TCP port on {address} below {ephemeral}")


def port_in_use(port: int) -> bool:
    """True when something already listens on 127.0.0.1:`port`."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers do: TIME_WAIT is no obstacle
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False
