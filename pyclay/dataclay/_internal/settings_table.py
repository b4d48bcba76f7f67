"""Every DATACLAY_* key of the system in one typed table: its type, default, meaning and the
components that read it. Python reads these keys only through `value` and `text` here (config.py
for clients and execution environments, cli/common/settings.py for the launchers); the Java
servers read theirs themselves, and tests/test_settings_tables.py holds their tables against this
one. docs/configuration.md and the README's table are generated from it (scripts/config_table.py).

A default is the string the reader falls back to ("" when there is none: the reader computes one,
described by `shown`, or the key is optional)."""
from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass
from typing import Any, Callable

from dataclay.exceptions import InvalidArgumentError

# The components that read keys
CLIENT = "client"              # pyclay: api.init(), dataclay.Client, dataclaycmd, dataclay export/import
JAVACLAY = "javaclay"          # the Java client library
LAUNCHER = "launcher"          # dataclay start / stop / status (cli/local)
SLURM = "slurm"                # dataclay slurm (cli/slurm)
LOGIC_MODULE = "logicmodule"   # logicmodule.jar
DATA_SERVICE = "dataservice"   # dataservice.jar
ENVIRONMENT = "environment"    # an execution environment and its sandbox, started by a Data Service
SCRIPTS = "scripts"            # the shell scripts under scripts/ (COMPSs storage_init.sh, the Slurm Epilog)
TESTS = "tests"                # the integration tests and benchmarks
COMPONENTS = (CLIENT, JAVACLAY, LAUNCHER, SLURM, LOGIC_MODULE, DATA_SERVICE, ENVIRONMENT, SCRIPTS, TESTS)
JAVA_COMPONENTS = (JAVACLAY, LOGIC_MODULE, DATA_SERVICE)

# Who sets a key
USER = "user"          # a person or their job script: documented in docs/configuration.md
INTERNAL = "internal"  # one of our processes, for a child it starts: not to be set by hand
TEST = "test"          # a knob of the test suites and benchmarks


@dataclass(frozen=True)
class Kind:
    """A value type: `parse(text)` returns the typed value or None when `text` is not one;
    `what` completes "KEY must be ..." in the message."""

    name: str
    what: str
    parse: Callable[[str], Any]
    entries: bool = False  # a comma-separated list: `what` describes one entry, and the message names the bad one
    options: tuple[str, ...] = ()  # a choice: the values allowed


def _integer(low: int, high: int | None = None) -> Callable[[str], int | None]:
    def parse(text: str) -> int | None:
        if not text.strip().isdigit():
            return None
        number = int(text)
        return number if number >= low and (high is None or number <= high) else None
    return parse


def _size(text: str) -> str | None:
    body = text[:-1] if text[-1:].upper() in ("K", "M", "G", "T") else text
    return text if body.isdigit() and int(body) > 0 else None


def _size_or_zero(text: str) -> str | None:
    return text if text == "0" else _size(text)


def _choice(*options: str) -> Kind:
    return Kind("choice", f"one of {', '.join(options)}", lambda text: text if text in options else None,
                options=options)


_GLOBAL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")


def _globals(text: str) -> tuple[str, ...] | None:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    return names if all(_GLOBAL_NAME.match(n) for n in names) else None


def _entries(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


_CPU_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")
NUMA = "numa"


def cpu_list(text: str) -> frozenset[int] | None:
    """The CPUs of a Linux CPU list ("0-3,8"), or None when `text` is not one (or names none)."""
    cpus: set[int] = set()
    for part in text.split(","):
        match = _CPU_RANGE.match(part.strip())
        if match is None:
            return None
        low, high = int(match.group(1)), int(match.group(2) or match.group(1))
        if high < low or high >= 1 << 16:
            return None
        cpus.update(range(low, high + 1))
    return frozenset(cpus) or None


def _cpus(text: str) -> str | tuple[frozenset[int], ...] | None:
    if text.strip() == NUMA:
        return NUMA
    groups = tuple(cpu_list(group) for group in text.split(";"))
    return groups if all(groups) else None


def _engine(text: str) -> str | None:
    from dataclay._internal.engines import ENGINE_NAMES  # the engine view lists the names; it needs no table
    return text if text in ENGINE_NAMES else None


TEXT = Kind("text", "text", lambda text: text)
HOST = Kind("host", "a host name or address", lambda text: text if text and not any(c.isspace() for c in text) else None)
PORT = Kind("port", "a port number (1-65535)", _integer(1, 65535))
PORT_OR_ZERO = Kind("port", "a port number (0: any free port)", _integer(0, 65535))
PORT_OR_OFF = Kind("port", "a port number (0: any free port) or off",
                   lambda text: text if text == "off" else _integer(0, 65535)(text))
POSITIVE = Kind("integer", "a positive integer", _integer(1))
WHOLE = Kind("integer", "a whole number", _integer(0))
MILLIS = Kind("milliseconds", "a whole number of milliseconds (0: no limit)", _integer(0))
SECONDS = Kind("seconds", "a whole number of seconds", _integer(0))
SIZE = Kind("size", "a size such as 512M or 4G", _size)
SIZE_OR_ZERO = Kind("size", "a size such as 512M or 4G (0: unlimited)", _size_or_zero)
PATH = Kind("path", "a path", lambda text: pathlib.Path(text).expanduser() if text else None)
URL = Kind("url", "a JDBC URL", lambda text: text if text.startswith("jdbc:") else None)
WORDS = Kind("words", "space-separated words", lambda text: tuple(text.split()))
GLOBALS = Kind("names", "module.name (e.g. numpy.dtype)", _globals, entries=True)
CLASSES = Kind("names", "comma-separated class names or package.*", lambda text: text)
ENGINE = Kind("engine", "a store engine", _engine)
CPUS = Kind("cpus", "numa, or CPU lists such as 0-3,8 separated by ;", _cpus)
CALLS = Kind("calls", "a whole number of calls per backend, at most 10000000 (0: none)", _integer(0, 10_000_000))


@dataclass(frozen=True)
class Setting:
    """One key: its type, its default (the string the readers fall back to, "" for none), what it
    changes, who reads it and who sets it; `shown` is the default as the docs word it, when the
    readers compute it; `first` puts it in the README's short table."""

    key: str
    kind: Kind
    default: str
    meaning: str
    readers: tuple[str, ...]
    setter: str = USER
    shown: str = ""
    first: bool = False

    def parse(self, text: str, where: str = "") -> Any:
        """The typed value of `text`; InvalidArgumentError naming this key and `where` the text came from."""
        value = self.kind.parse(text)
        if value is None:
            after = f" {where}" if where else ""
            if self.kind.entries:
                bad = next(e for e in _entries(text) if self.kind.parse(e) is None)
                raise InvalidArgumentError(f"{self.key} entries must be {self.kind.what}, not {bad!r}{after}")
            raise InvalidArgumentError(f"{self.key} must be {self.kind.what}, not {text!r}{after}")
        return value


def _s(key, kind, default, meaning, readers, **more) -> Setting:
    return Setting(key, kind, default, meaning, tuple(readers), **more)


DEFAULT_PORT = 11034
DEFAULT_UNREACHABLE_MS = 1200

_LM, _DS, _EE = LOGIC_MODULE, DATA_SERVICE, ENVIRONMENT
_SERVERS = (_LM, _DS)

SETTINGS: dict[str, Setting] = {s.key: s for s in (
    # where the cluster is, and who is asking
    _s("DATACLAY_HOME", PATH, "~/.dataclay", "a local cluster's state, logs, embedded metadata and `client.properties`",
       (CLIENT, JAVACLAY, LAUNCHER, _LM, _DS), first=True),
    _s("DATACLAY_HOST", HOST, "127.0.0.1", "the Logic Module's address (for the Logic Module itself: the address it is "
       "reached at, which it binds)", (CLIENT, JAVACLAY, _LM, _DS), first=True),
    _s("DATACLAY_PORT", PORT, str(DEFAULT_PORT), "the Logic Module's port (the Logic Module itself: `0` binds any free "
       "port)", (CLIENT, JAVACLAY, LAUNCHER, _LM, _DS), first=True),
    _s("DATACLAY_USER", TEXT, "", "account of a client; for `dataclay start`, the administrator to create",
       (CLIENT, JAVACLAY, LAUNCHER, _LM), shown="from `client.properties`", first=True),
    _s("DATACLAY_PASSWORD", TEXT, "", "that account's password", (CLIENT, JAVACLAY, LAUNCHER, _LM),
       shown="from `client.properties`", first=True),
    _s("DATACLAY_DATASET", TEXT, "", "dataset of a client session's new objects", (CLIENT, JAVACLAY),
       shown="the user's own", first=True),
    _s("DATACLAY_NEW_PASSWORD", TEXT, "", "`dataclaycmd NewAccount <user> -`: the new account's password (else read "
       "from standard input)", (CLIENT,)),
    # metadata
    _s("DATACLAY_METADATA_URL", URL, "", "JDBC URL of the metadata database (`jdbc:postgresql://host/db?user=...`)",
       (LAUNCHER, _LM), shown="embedded SQLite in `$DATACLAY_HOME/lm`"),
    _s("DATACLAY_METADATA_SYNC", _choice("normal", "full"), "normal",
       "embedded database: `normal` survives a process crash, `full` also a power loss", (_LM,)),
    _s("DATACLAY_GC_INTERVAL", SECONDS, "600", "Logic Module: seconds between garbage collections, which remove "
       "objects no alias, no open session and no reachable object reaches (`0`: only on `dataclaycmd "
       "CollectGarbage`)", (_LM,)),
    # store engines
    _s("DATACLAY_STORE", ENGINE, "kv", "store engine of the backends: `kv`, `heap`, `2lm`, `postgres` or `memory`",
       (LAUNCHER, SLURM, _DS), first=True),
    _s("DATACLAY_STORE_PATH", PATH, "", "directory of the pools (one per backend); made mode 0700, refused if "
       "another user owns it or could reach it", (LAUNCHER, _DS),
       shown="`/dev/shm/dataclay-<user>-<random>`, recorded in `cluster.json`", first=True),
    _s("DATACLAY_STORE_SIZE", SIZE, "1G", "pool size per backend", (LAUNCHER, SLURM, _DS), first=True),
    _s("DATACLAY_STORE_URL", URL, "", "`postgres` engine: JDBC URL of its database "
       "(`jdbc:postgresql://host:5432/db?user=...`)", (LAUNCHER, SLURM, _DS), shown="none (required for `postgres`)"),
    _s("DATACLAY_STORE_KEY_FILE", PATH, "", "file of the 256-bit key that encrypts stored field values (see "
       "[Encryption at rest and erasure](engines.md#encryption-at-rest-and-erasure)); `dataclay start` hands the "
       "path to the backends", (LAUNCHER, SLURM, _DS), shown="none: not encrypted"),
    _s("DATACLAY_2LM_CACHE_SIZE", SIZE, "256M", "`2lm` engine: DRAM for cached objects", (_DS,)),
    _s("DATACLAY_2LM_CHECKPOINT_MS", POSITIVE, "1000", "`2lm` engine: checkpoint period, i.e. how many ms of writes "
       "a crash can lose", (_DS,)),
    # values
    _s("DATACLAY_PICKLE_ALLOW", GLOBALS, "", "extra exact `module.name` globals the clients and the backends may "
       "unpickle, comma-separated, set on both; numpy, `datetime`, `decimal`, `uuid`, `fractions` and "
       "`collections` need none. A refusal names the value to add; pandas' is in [models.md](models.md)",
       (CLIENT, _DS), shown="none", first=True),
    _s("DATACLAY_JAVA_ALLOW", CLASSES, "", "extra class names or `package.*` the Java clients and the backends' Java "
       "environments may deserialise, comma-separated (see [java.md](java.md))", (JAVACLAY, _DS), shown="none"),
    # a Data Service's identity and address
    _s("DATACLAY_BACKEND_NAME", TEXT, "", "a Data Service's name", (_DS,), shown="the host name"),
    _s("DATACLAY_BACKEND_HOST", HOST, "127.0.0.1", "a Data Service's advertised address (which it binds)", (_DS,)),
    _s("DATACLAY_BACKEND_PORT", PORT_OR_ZERO, "0", "a Data Service's port (`0`: any free port, registered as bound)",
       (_DS,)),
    _s("DATACLAY_CALL_PORT", PORT_OR_OFF, "0", "a Data Service's call port, where clients make method calls and field "
       "reads and writes as frames instead of gRPC calls (same address and TLS as its gRPC port; `0`: any free port, "
       "`off`: none, clients then use gRPC). Not served while tracing is on, so that every call is traced", (_DS,)),
    _s("DATACLAY_BACKEND_DIR", PATH, "", "a Data Service's directory (its ID, installed models, imports); made mode "
       "0700", (_DS,), shown="`$DATACLAY_HOME/backends/<name>`"),
    _s("DATACLAY_BIND_HOST", HOST, "", "a server: the address to listen on instead of the advertised one; `0.0.0.0` "
       "listens on every interface", _SERVERS, shown="the advertised host"),
    # metrics
    _s("DATACLAY_METRICS_PORT", PORT_OR_ZERO, "", "a server: the port of its Prometheus metrics endpoint (`/metrics`; "
       "`0`: any free port, logged); `dataclay start` gives the Logic Module this port and backend *i* (from 0) the "
       "port plus *i* + 1 (see [Metrics](metrics.md))", (LAUNCHER, _LM, _DS), shown="unset: no metrics"),
    _s("DATACLAY_METRICS_HOST", HOST, "127.0.0.1", "a server: the address its metrics endpoint listens on; beyond "
       "loopback it needs TLS (it serves HTTPS with the server's certificate) and `DATACLAY_METRICS_TOKEN_FILE`",
       _SERVERS),
    _s("DATACLAY_METRICS_TOKEN_FILE", PATH, "", "a server: the file (mode 0600, 32+ printable characters) holding the "
       "bearer token every scrape must send (Prometheus: `authorization.credentials_file`)", _SERVERS,
       shown="unset: `$DATACLAY_HOME/metrics.token`, made by `dataclay start`; none for a server started alone "
             "(loopback only)"),
    # TLS and the cluster secret
    _s("DATACLAY_TLS_CA", PATH, "", "PEM file of the cluster CA: set, every connection uses TLS and trusts only that "
       "CA (clients need only this; see [TLS](security.md#tls))", (CLIENT, JAVACLAY, _LM, _DS), shown="unset: plaintext",
       first=True),
    _s("DATACLAY_TLS_CERT", PATH, "", "a server: its certificate (naming its advertised address), PEM", _SERVERS,
       shown="unset"),
    _s("DATACLAY_TLS_KEY", PATH, "", "a server: its certificate's unencrypted PKCS#8 key, PEM", _SERVERS, shown="unset"),
    _s("DATACLAY_CLUSTER_SECRET_FILE", PATH, "", "a server: the file (mode 0600, 32+ characters) holding the secret "
       "the servers share; backends prove they know it to the Logic Module", _SERVERS,
       shown="`$DATACLAY_HOME/cluster.secret`, made by `dataclay start`"),
    # limits
    _s("DATACLAY_MAX_MESSAGE_SIZE", SIZE, "768M", "a server: the largest request it reads (`768M`, `1G`, ...); a "
       "larger one is refused before it is read", _SERVERS),
    _s("DATACLAY_MODEL_MAX_BYTES", POSITIVE, "16777216", "Logic Module: the largest model (its files' bytes) an "
       "account may register", (_LM,)),
    _s("DATACLAY_MIN_PASSWORD_LENGTH", POSITIVE, "12", "Logic Module: the shortest password a new account may have "
       "(lowering it makes passwords easier to guess; dataClay 4's examples use six characters)", (_LM,)),
    _s("DATACLAY_SESSION_TTL_HOURS", POSITIVE, "168", "Logic Module: lifetime of a session, in hours", (_LM,)),
    _s("DATACLAY_MAX_SESSIONS_PER_ACCOUNT", POSITIVE, "500", "Logic Module: sessions one account (administrators "
       "too) may hold open; closed and expired ones do not count", (_LM,)),
    _s("DATACLAY_SESSIONS_PER_SECOND", POSITIVE, "20", "Logic Module: new sessions one account may open a second on "
       "average; bursts of ten times as many pass", (_LM,)),
    _s("DATACLAY_MAX_VALUE_SIZE", SIZE, "256M", "a backend: the largest single field value or method result (`256M`, "
       "...); a larger one is refused when written, so no read returns one", (_DS,),
       shown="`256M` (or `DATACLAY_MAX_MESSAGE_SIZE` if smaller)"),
    _s("DATACLAY_QUOTA_OBJECTS", WHOLE, "10000000", "a backend: objects one dataset may hold there (`0`: unlimited)",
       (_DS,)),
    _s("DATACLAY_QUOTA_BYTES", SIZE_OR_ZERO, "0", "a backend: bytes of field values one dataset may hold there (`20G`, ...; "
       "`0`: unlimited, bounded by the pool). Set it on a shared cluster; each change of an object then costs a "
       "read of it", (_DS,)),
    # liveness and failover
    _s("DATACLAY_UNREACHABLE_MS", MILLIS, str(DEFAULT_UNREACHABLE_MS), "every process (clients, backends, Logic "
       "Module): how long a call waits for a server that answers neither it nor a ping before it fails with "
       "BackendUnavailable and fails over (`0`: forever)", (CLIENT, JAVACLAY, _LM, _DS)),
    _s("DATACLAY_HEARTBEAT_MS", POSITIVE, "1000", "a backend: how often it heartbeats to the Logic Module", (_DS,)),
    _s("DATACLAY_BACKEND_TIMEOUT_MS", POSITIVE, "5000", "Logic Module: a backend without a heartbeat for this long "
       "is listed as not alive", (_LM,)),
    _s("DATACLAY_PROMOTE_AFTER_MS", MILLIS, "6000", "Logic Module: a backend without a heartbeat for this long has "
       "one replica of each of its replicated objects promoted to master (`0`: never; else at least 2000 and more "
       "than `DATACLAY_BACKEND_TIMEOUT_MS`)", (_LM,)),
    _s("DATACLAY_EE_WAIT_MS", POSITIVE, "10000", "a backend: how long a call waits for the backend's models to be "
       "installed (at start) or its execution environment to be up, before BACKEND_UNAVAILABLE", (_DS,)),
    # execution environments
    _s("DATACLAY_PYTHON", TEXT, "python3", "interpreter of a backend's Python execution environments (with pyclay "
       "installed; it also runs the sandbox launcher); `none` runs no Python environment", (_DS,)),
    _s("DATACLAY_EE_CONFINEMENT", _choice("auto", "bwrap", "kernel", "none"), "auto", "a backend: how model code is "
       "confined (see [Security](security.md)): `auto` (bubblewrap and the kernel's Landlock, seccomp and limits; "
       "the kernel's alone where bubblewrap cannot run; refused where neither can), `bwrap`, `kernel`, or `none` "
       "(unconfined: for a cluster whose only user is its owner)", (_DS,)),
    _s("DATACLAY_JAVA_EE", _choice("confined", "in-process"), "confined", "a backend: `confined` runs Java methods "
       "in a confined process per account like Python's; `in-process` in the Data Service's JVM (faster, trusted "
       "with the whole node: single-user clusters only)", (_DS,)),
    _s("DATACLAY_EE_THREADS", POSITIVE, "16", "a backend: calls one account may run at once there (more wait); the "
       "backend hands it to its environments", (_DS, _EE)),
    _s("DATACLAY_EE_RESIDENT_MB", WHOLE, "0", "a backend: stored MiB of objects one Python environment process "
       "keeps in memory; past it, the idle objects used least recently are unloaded, and reloaded from the store "
       "when used again (`0`: a quarter of DATACLAY_EE_MEMORY_MB); the backend hands it to its environments",
       (_DS, _EE)),
    _s("DATACLAY_EE_MAX_QUEUED", WHOLE, "1024", "a backend: calls one account may have waiting there; more are "
       "refused with QuotaExceeded", (_DS,)),
    _s("DATACLAY_CALL_TIMEOUT_S", SECONDS, "1800", "a backend: seconds a method may run; past it the call fails with "
       "CallTimedOut, nothing it changed is stored and its account's environment restarts (`0`: no limit)", (_DS,)),
    _s("DATACLAY_EE_MEMORY_MB", POSITIVE, "4096", "a backend: memory (MiB, address space; a Java environment's heap "
       "gets half) of one environment process", (_DS,)),
    _s("DATACLAY_EE_MAX_TASKS", POSITIVE, "512", "a backend: processes plus threads of one environment process", (_DS,)),
    _s("DATACLAY_EE_MAX_PROCESSES", POSITIVE, "64", "a backend: environment processes per language (one per active "
       "account)", (_DS,)),
    _s("DATACLAY_EE_IDLE_S", POSITIVE, "600", "a backend: the seconds an environment process stays up without calls",
       (_DS,)),
    _s("DATACLAY_EE_SPARES", _choice("0", "1"), "1", "a backend: `1` keeps one environment process per language "
       "started ahead, confined and with no model, which the next new account takes, so its first call does not "
       "wait for a process to start (Java's once a Java model is deployed); `0` starts each at the account's "
       "first call", (_DS,)),
    _s("DATACLAY_EE_OUTPUT_BYTES_S", WHOLE, "16384", "a backend: bytes a second one environment process may write to "
       "the Data Service's log on average (bursts of 64 seconds' worth pass; the rest is left out and counted; "
       "`0`: none of it)", (_DS,)),
    _s("DATACLAY_EE_UID_BASE", POSITIVE, "1900000000", "a backend run as root: environment processes run as uid/gid "
       "base + slot", (_DS, _EE)),
    # the launchers
    _s("DATACLAY_JAVA", TEXT, "", "`dataclay start` and `dataclay slurm`: the java executable of the servers",
       (LAUNCHER, SLURM), shown="`$JAVA_HOME/bin/java`, else `java` on `PATH`"),
    _s("DATACLAY_CPUS", CPUS, "", "`dataclay start` and `dataclay slurm`: the CPUs each backend's Data Service and "
       "its execution environments run on. `numa`: backend *i* (from 0) on the *i*-th NUMA node with CPUs, mod "
       "their count, one backend per socket next to its memory; or Linux CPU lists separated by `;`, backend *i* "
       "on list *i* mod their count (e.g. `0-17;18-35`); under `dataclay slurm` a node's one backend takes the "
       "first list, or the first NUMA node with CPUs. On a 2-CPU VM, one CPU for the backend made a single "
       "client's update 20-33 % faster at the median but slower at the p99 "
       "([benchmarks](../benchmarks/README.md#placement))", (LAUNCHER, SLURM), shown="unset: the OS places them"),
    _s("DATACLAY_WARMUP", CALLS, "0", "`dataclay start` and `dataclay slurm`: once the cluster is up, and before "
       "they say so, this many calls on each backend, through the path programs' calls take, on a model and "
       "objects of its own that it then removes (`--warm-up` sets it too); it waits for the servers' JIT to "
       "finish. On a 2-CPU VM, `20000` made the start 5-6.5 s longer, and a program's first 20,000 calls then "
       "had a p99 of 2.7-3.5x the warm median, against 10-13x without "
       "([benchmarks](../benchmarks/README.md#environment-threads-the-thread-that-reads-a-call-runs-it-2026-11-28-night))", (LAUNCHER, SLURM), shown="0: none"),
    _s("DATACLAY_JAVA_OPTS", WORDS, "", "`dataclay start`: extra options for the server JVMs, space-separated (e.g. "
       "`-Xmx8g`). A cluster that will serve millions of calls reaches its warm speed sooner with "
       "`-XX:Tier4InvocationThreshold=500 -XX:Tier4MinInvocationThreshold=60 -XX:Tier4CompileThreshold=1500 "
       "-XX:Tier4BackEdgeThreshold=4000` ([benchmarks](../benchmarks/README.md#jit-warm-up))", (LAUNCHER, SLURM),
       shown="none"),
    _s("DATACLAY_JARS", PATH, "", "`dataclay start` and `dataclay slurm`: the directory of `logicmodule.jar` and "
       "`dataservice.jar`", (LAUNCHER, SLURM), shown="the jars installed with pyclay"),
    _s("DATACLAY_CLASS_ARCHIVES", _choice("use", "off", "record"), "use", "`dataclay start`: `use` starts each "
       "server JVM with the class archive `make build` records beside its jar (`logicmodule.jsa`, "
       "`dataservice.jsa`: a killed backend serves again in 2.6 s instead of 3.6 s here, see "
       "[benchmarks](../benchmarks/README.md)), `off` without it", (LAUNCHER, SLURM)),
    _s("DATACLAY_SLURM_DIR", PATH, "~/.dataclay/slurm", "`dataclay slurm`: where each job's directory goes (`<dir>/<job "
       "id>`: its client.properties, credentials while it runs, logs); on a file system every node of the job sees",
       (SLURM,)),
    _s("DATACLAY_SLURM_POOLS", PATH, "/dev/shm", "`dataclay slurm`: node-local directory of the job's pools "
       "(`<dir>/dataclay-job<id>-<node>-<random>`, erased when the job ends; the Epilog script must name the same); "
       "also a key of `storage_init.sh`'s properties", (SLURM, SCRIPTS)),
    _s("DATACLAY_EPILOG_POOL_DIRS", TEXT, "/dev/shm", "`scripts/slurm-epilog.sh`: the directories where it erases "
       "the pools of the job that ended", (SCRIPTS,)),
    _s("DATACLAY_CMD", TEXT, "", "`storage_init.sh`, `storage_stop.sh`: the `dataclay` command", (SCRIPTS,),
       shown="`dataclay` on `PATH`, else the storage home's `.venv/bin/dataclay`"),
    # keys of the COMPSs storage properties file read by scripts/storage_init.sh (see compss.md)
    _s("DATACLAY_IMPORT", PATH, "", "`storage_init.sh` properties: a snapshot directory to load at start",
       (SCRIPTS,), shown="none"),
    _s("DATACLAY_IMPORT_ALLOW", TEXT, "", "`storage_init.sh` properties: what that import may do "
       "(`dataclay import --allow`)", (SCRIPTS,), shown="none"),
    _s("DATACLAY_IMPORT_TRUST", PATH, "", "`storage_init.sh` properties: a public key the import trusts "
       "(`--trust`; one line per key)", (SCRIPTS,), shown="none"),
    _s("DATACLAY_EXPORT", PATH, "", "`storage_init.sh` properties: where `storage_stop.sh` saves the objects at the "
       "end", (SCRIPTS,), shown="none"),
    _s("DATACLAY_START_TIMEOUT", SECONDS, "180", "`storage_init.sh` properties: seconds the cluster may take to start",
       (SCRIPTS,)),
    _s("DATACLAY_MODEL", TEXT, "", "`storage_init.sh` properties: `NAMESPACE:LANGUAGE:PATH`, a model to register "
       "(one line per model)", (SCRIPTS,), shown="none"),
    # set by our processes for the processes they start
    _s("DATACLAY_EE_BACKEND_ID", TEXT, "", "ID of the backend that started this execution environment", (_EE,),
       setter=INTERNAL),
    _s("DATACLAY_EE_PICKLE_ALLOW", GLOBALS, "", "the backend's DATACLAY_PICKLE_ALLOW, for its Python environments",
       (_EE,), setter=INTERNAL),
    _s("DATACLAY_EE_JAVA_ALLOW", CLASSES, "", "the backend's DATACLAY_JAVA_ALLOW, for its Java environments", (_EE,),
       setter=INTERNAL),
    _s("DATACLAY_EE_LAUNCHER", PATH, "", "directory of pyclay's sandbox package, which a backend runs as a script "
       "(set by `dataclay start` and `dataclay slurm`)", (_DS,), setter=INTERNAL),
    _s("DATACLAY_SANDBOX", TEXT, "", "the sandbox profile (JSON) the sandbox launcher hands its exec wrapper", (_EE,),
       setter=INTERNAL),
    _s("DATACLAY_SANDBOX_APPLIED", TEXT, "none", "what the exec wrapper applied, for the environment to report", (_EE,),
       setter=INTERNAL),
    # knobs of the tests and benchmarks
    _s("DATACLAY_TEST_ENGINES", TEXT, "", "comma-separated engines the engine-parametrised tests run on", (TESTS,),
       setter=TEST, shown="every engine"),
    _s("DATACLAY_TEST_JVM", WORDS, "", "JVM options of the multi-host tests' servers", (TESTS,), setter=TEST),
    _s("DATACLAY_CRASH_ROUNDS", POSITIVE, "5", "kill-and-restart rounds per engine of tests/test_engine_crashes.py",
       (TESTS,), setter=TEST),
)}

# dataClay 4's client settings (DC_*, from the environment or a .env file in the working directory)
# and the keys they stand for here; a DATACLAY_* key that is set wins over its DC_* twin
DATACLAY4_ALIASES = {
    "DC_HOST": "DATACLAY_HOST", "DC_PORT": "DATACLAY_PORT", "DC_USERNAME": "DATACLAY_USER",
    "DC_PASSWORD": "DATACLAY_PASSWORD", "DC_DATASET": "DATACLAY_DATASET",
}
DATACLAY4_ALIASES_MEANING = (
    "dataClay 4's names of the five above, for a client: read from the environment and from a `.env` file in the "
    "working directory, over `client.properties`; a `DATACLAY_*` key that is set wins. A `.env` is trusted like "
    "the program itself (it can name the host a password goes to): keep it where only you can write")


def setting(key: str) -> Setting:
    """The entry of `key`; KeyError for a name that is not in the table."""
    return SETTINGS[key]


def keys_read_by(component: str) -> frozenset[str]:
    """The keys `component` reads."""
    return frozenset(k for k, s in SETTINGS.items() if component in s.readers)


def text(key: str, values: dict, default: str | None = None) -> str | None:
    """The text `values` holds for `key`, else `default`, else the table's default ("" counts as none)."""
    found = values.get(setting(key).key)
    if found is not None:
        return found
    if default is not None:
        return default
    return SETTINGS[key].default or None


def value(key: str, values: dict, where: str = "") -> Any:
    """The typed value of `key` in `values` (a key that is missing takes the table's default; None when
    it has none); InvalidArgumentError naming the key, the bad text and `where` it came from."""
    raw = text(key, values)
    return None if raw is None else setting(key).parse(raw, where)
