"""Configuration of the local-cluster launcher (`dataclay start/stop/status`): every key it
reads, with its default. Nothing else in the CLI reads the environment."""
from __future__ import annotations

import getpass
import hashlib
import os
import pathlib
import secrets
import shutil
from dataclasses import dataclass, field

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.cli.common.class_archives import MODES

ENGINES = ("kv", "heap", "2lm", "postgres", "memory")
DEFAULT_PORT = 11034


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
    java: str                         # DATACLAY_JAVA: java executable (else $JAVA_HOME/bin/java, else java on PATH)
    java_opts: tuple[str, ...]        # DATACLAY_JAVA_OPTS: extra JVM options, space-separated
    jars: pathlib.Path                # DATACLAY_JARS: directory with logicmodule.jar and dataservice.jar
    class_archives: str               # DATACLAY_CLASS_ARCHIVES: use (the jars' class archives), off, record
    ca_key_dir: pathlib.Path          # where --tls keeps the CA's key, outside the cluster home
                                      # ($XDG_CONFIG_HOME or ~/.config, then dataclay/ca/<digest of the home>)
    passthrough: dict = field(default_factory=dict)  # other DATACLAY_* keys handed to the servers as they are
    java_from: str = "PATH"           # which setting named `java`: DATACLAY_JAVA, JAVA_HOME or PATH (for messages)

    @classmethod
    def from_env(cls, env: dict | None = None) -> "ClusterSettings":
        """Reads the settings from `env` (the process environment by default), checking each value."""
        env = dict(os.environ if env is None else env)
        home = pathlib.Path(env.get("DATACLAY_HOME") or pathlib.Path.home() / ".dataclay").expanduser().resolve()
        port_text = env.get("DATACLAY_PORT") or str(DEFAULT_PORT)
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise InvalidArgumentError(f"DATACLAY_PORT must be a port number (1-65535), not {port_text!r}")
        store = env.get("DATACLAY_STORE") or None
        if store is not None:
            check_engine(store, "DATACLAY_STORE")
        store_path = env.get("DATACLAY_STORE_PATH")
        key_file = env.get("DATACLAY_STORE_KEY_FILE")
        size = env.get("DATACLAY_STORE_SIZE") or "1G"
        check_size(size)
        default_jars = pathlib.Path(__file__).resolve().parents[2] / "jars"
        own = {"DATACLAY_HOME", "DATACLAY_PORT", "DATACLAY_USER", "DATACLAY_PASSWORD", "DATACLAY_METADATA_URL",
               "DATACLAY_STORE", "DATACLAY_STORE_PATH", "DATACLAY_STORE_SIZE", "DATACLAY_STORE_KEY_FILE", "DATACLAY_JAVA",
               "DATACLAY_JAVA_OPTS", "DATACLAY_JARS", "DATACLAY_CLASS_ARCHIVES", "DATACLAY_HOST",
               "DATACLAY_DATASET",
               # TLS of a local cluster comes from `dataclay start --tls` alone: a certificate or key
               # path set for some other use must not reach its servers
               "DATACLAY_TLS_CA", "DATACLAY_TLS_CERT", "DATACLAY_TLS_KEY"}
        class_archives = env.get("DATACLAY_CLASS_ARCHIVES") or "use"
        if class_archives not in MODES:
            raise InvalidArgumentError(
                f"DATACLAY_CLASS_ARCHIVES must be one of {', '.join(MODES)}, not {class_archives!r}")
        java, java_from = _java(env)
        return cls(
            home=home,
            port=int(port_text),
            user=env.get("DATACLAY_USER") or None,
            password=env.get("DATACLAY_PASSWORD") or None,
            metadata_url=env.get("DATACLAY_METADATA_URL") or None,
            store=store,
            store_path=pathlib.Path(store_path).expanduser().resolve() if store_path else None,
            store_size=size,
            # absolute: the servers run in DATACLAY_HOME; the Data Service checks the file itself
            store_key_file=pathlib.Path(key_file).expanduser().absolute() if key_file else None,
            java=java,
            java_from=java_from,
            java_opts=tuple((env.get("DATACLAY_JAVA_OPTS") or "").split()),
            jars=pathlib.Path(env.get("DATACLAY_JARS") or default_jars),
            class_archives=class_archives,
            ca_key_dir=_ca_key_dir(env, home),
            passthrough={k: v for k, v in env.items()
                         if (k.startswith("DATACLAY_") and k not in own) or k.startswith("PMEM_")},
        )

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
    if env.get("DATACLAY_JAVA"):
        return env["DATACLAY_JAVA"], "DATACLAY_JAVA"
    if env.get("JAVA_HOME"):
        return str(pathlib.Path(env["JAVA_HOME"]).expanduser() / "bin" / "java"), "JAVA_HOME"
    return shutil.which("java", path=env.get("PATH")) or "java", "PATH"


def _ca_key_dir(env: dict, home: pathlib.Path) -> pathlib.Path:
    config = pathlib.Path(env.get("XDG_CONFIG_HOME") or pathlib.Path.home() / ".config").expanduser().absolute()
    return config / "dataclay" / "ca" / hashlib.sha256(str(home).encode()).hexdigest()[:16]


def check_engine(name: str, where: str) -> str:
    """Returns `name` if it is a known store engine, else raises naming `where` it came from."""
    if name not in ENGINES:
        raise InvalidArgumentError(f"{where}: unknown store engine {name!r}; choose one of {', '.join(ENGINES)}")
    return name


def check_size(text: str) -> str:
    """Accepts sizes such as 1048576, 512M or 4G."""
    body = text[:-1] if text[-1:].upper() in ("K", "M", "G", "T") else text
    if not body.isdigit() or int(body) == 0:
        raise InvalidArgumentError(f"DATACLAY_STORE_SIZE must be a size such as 512M or 4G, not {text!r}")
    return text
