"""Configuration of the local-cluster launcher (`dataclay start/stop/status`), read from the keys
settings_table.py lists with their types and defaults. Nothing else in the CLI reads the environment."""
from __future__ import annotations

import getpass
import hashlib
import os
import pathlib
import secrets
import shutil
from dataclasses import dataclass, field

from dataclay._internal import engines, settings_table as table
from dataclay._internal.settings_table import LAUNCHER

# The servers get every DATACLAY_* key as it is but those the launcher reads itself (except
# PASSED_ON, which it only checks) and those it withholds. TLS of a local cluster comes from
# `dataclay start --tls` alone: a certificate or key path set for some other use must not reach its servers.
PASSED_ON = frozenset({"DATACLAY_STORE_URL"})
WITHHELD = frozenset({"DATACLAY_HOST", "DATACLAY_DATASET", "DATACLAY_TLS_CA", "DATACLAY_TLS_CERT", "DATACLAY_TLS_KEY"})
OWN_KEYS = (table.keys_read_by(LAUNCHER) - PASSED_ON) | WITHHELD


@dataclass(frozen=True)
class ClusterSettings:
    """What `dataclay start` needs to launch a Logic Module and its backends on this machine."""

    home: pathlib.Path                # DATACLAY_HOME: state, logs, client.properties (~/.dataclay)
    port: int                         # DATACLAY_PORT: the Logic Module's port (11034)
    user: str | None                  # DATACLAY_USER: administrator to create (else "admin")
    password: str | None              # DATACLAY_PASSWORD: its password (else random, kept in client.properties)
    metadata_url: str | None          # DATACLAY_METADATA_URL: JDBC URL; unset = embedded database
    store: str | None                 # DATACLAY_STORE: engine of new backends (kv)
    store_path: pathlib.Path | None   # DATACLAY_STORE_PATH: directory holding one pool per backend
    store_size: str                   # DATACLAY_STORE_SIZE: pool size per backend (1G)
    store_key_file: pathlib.Path | None  # DATACLAY_STORE_KEY_FILE: key encrypting stored values (backends only)
    metrics_port: int | None          # DATACLAY_METRICS_PORT: the Logic Module's; backend i gets it + i + 1 (0: any)
    cpus: object                      # DATACLAY_CPUS: "numa" or CPU sets the backends run on (placement.py); None: any
    java: str                         # DATACLAY_JAVA: java executable (else $JAVA_HOME/bin/java, else java on PATH)
    java_opts: tuple[str, ...]        # DATACLAY_JAVA_OPTS: extra JVM options, space-separated
    jars: pathlib.Path                # DATACLAY_JARS: directory with logicmodule.jar and dataservice.jar
    class_archives: str               # DATACLAY_CLASS_ARCHIVES: use (the jars' class archives), off, record
    warm_up: int                      # DATACLAY_WARMUP: calls on each backend once the cluster is up (local/warm_up.py)
    ca_key_dir: pathlib.Path          # where --tls keeps the CA's key, outside the cluster home
                                      # ($XDG_CONFIG_HOME or ~/.config, then dataclay/ca/<digest of the home>)
    passthrough: dict = field(default_factory=dict)  # other DATACLAY_* keys handed to the servers as they are
    java_from: str = "PATH"           # which setting named `java`: DATACLAY_JAVA, JAVA_HOME or PATH (for messages)

    @classmethod
    def from_env(cls, env: dict | None = None) -> "ClusterSettings":
        """Reads the settings from `env` (the process environment by default), checking each value."""
        env = dict(os.environ if env is None else env)
        values = {k: v for k, v in env.items() if v}  # an empty key counts as unset
        home = table.value("DATACLAY_HOME", values).resolve()
        store = table.text("DATACLAY_STORE", values, default="") or None
        if store is not None:
            engines.engine(store, "DATACLAY_STORE")
        store_path = table.value("DATACLAY_STORE_PATH", values)
        key_file = table.value("DATACLAY_STORE_KEY_FILE", values)
        java, java_from = _java(values)
        return cls(
            home=home,
            port=table.value("DATACLAY_PORT", values),
            user=table.value("DATACLAY_USER", values),
            password=table.value("DATACLAY_PASSWORD", values),
            metadata_url=table.text("DATACLAY_METADATA_URL", values),
            store=store,
            store_path=store_path.resolve() if store_path else None,
            store_size=table.value("DATACLAY_STORE_SIZE", values),
            # absolute: the servers run in DATACLAY_HOME; the Data Service checks the file itself
            store_key_file=key_file.absolute() if key_file else None,
            metrics_port=table.value("DATACLAY_METRICS_PORT", values),
            cpus=table.value("DATACLAY_CPUS", values),
            java=java,
            java_from=java_from,
            java_opts=table.value("DATACLAY_JAVA_OPTS", values) or (),
            jars=table.value("DATACLAY_JARS", values) or pathlib.Path(__file__).resolve().parents[2] / "jars",
            class_archives=table.value("DATACLAY_CLASS_ARCHIVES", values),
            warm_up=table.value("DATACLAY_WARMUP", values),
            ca_key_dir=_ca_key_dir(env, home),
            passthrough={k: v for k, v in env.items()
                         if (k.startswith("DATACLAY_") and k not in OWN_KEYS) or k.startswith("PMEM_")},
        )

    def server_env(self, values: dict[str, str] | None = None) -> dict[str, str]:
        """The environment of a server process: this one without its DATACLAY_* keys, then the keys
        handed to the servers (passthrough), then `values`."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("DATACLAY_")}
        env.update(self.passthrough)
        env.update(values or {})
        return env

    def new_store_root(self) -> pathlib.Path:
        """A fresh name for the pools' directory on /dev/shm (emulated NVRAM): 64 random bits, so
        no other user can make it first (/dev/shm is everybody's)."""
        return pathlib.Path("/dev/shm") / f"dataclay-{getpass.getuser()}-{secrets.token_hex(8)}"

    def legacy_store_root(self) -> pathlib.Path:
        """The pools' directory releases before 21 chose (anyone could compute it): a cluster that
        still records it gets a new one when it is gone."""
        digest = hashlib.sha256(str(self.home).encode()).hexdigest()[:10]
        return pathlib.Path("/dev/shm") / f"dataclay-{getpass.getuser()}-{digest}"


def _java(env: dict) -> tuple[str, str]:
    """The java executable the servers run on, and the setting that named it."""
    if table.text("DATACLAY_JAVA", env):
        return table.text("DATACLAY_JAVA", env), "DATACLAY_JAVA"
    if env.get("JAVA_HOME"):
        return str(pathlib.Path(env["JAVA_HOME"]).expanduser() / "bin" / "java"), "JAVA_HOME"
    return shutil.which("java", path=env.get("PATH")) or "java", "PATH"


def _ca_key_dir(env: dict, home: pathlib.Path) -> pathlib.Path:
    config = pathlib.Path(env.get("XDG_CONFIG_HOME") or pathlib.Path.home() / ".config").expanduser().absolute()
    return config / "dataclay" / "ca" / hashlib.sha256(str(home).encode()).hexdigest()[:16]


def check_size(text: str) -> str:
    """Accepts sizes such as 1048576, 512M or 4G."""
    return table.setting("DATACLAY_STORE_SIZE").parse(text)
