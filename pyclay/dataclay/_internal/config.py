"""Every configuration key of pyclay (client and execution environment) with its default: the
only code that reads the environment. Values come from a KEY=VALUE file ('#' comments; the
format of $DATACLAY_HOME/client.properties) and environment variables that are set (non-empty)
override the file."""
from __future__ import annotations

import dataclasses
import os
import pathlib
import re
from dataclasses import dataclass

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.rpc.channels import DEFAULT_UNREACHABLE_MS
from dataclay._internal.rpc.tls import ClusterCa

DEFAULT_PORT = 11034
DEFAULT_EE_THREADS = 16
CLIENT_FILE = "client.properties"

KEYS = {
    "DATACLAY_HOME": "directory of a local cluster and its client.properties (~/.dataclay)",
    "DATACLAY_HOST": "Logic Module host (127.0.0.1)",
    "DATACLAY_PORT": "Logic Module port (11034)",
    "DATACLAY_USER": "account used by api.init() and dataclaycmd",
    "DATACLAY_PASSWORD": "its password",
    "DATACLAY_NEW_PASSWORD": "dataclaycmd NewAccount <user> -: the new account's password (else standard input)",
    "DATACLAY_DATASET": "dataset of the session's new objects (empty: the user's own)",
    "DATACLAY_PICKLE_ALLOW": "comma-separated module.name globals the unpickler also accepts",
    "DATACLAY_TLS_CA": "PEM file of the cluster CA: set, every connection uses TLS and trusts only it (plaintext)",
    "DATACLAY_UNREACHABLE_MS": "how long a call waits for a server that answers neither it nor a ping before it "
                               "fails with BackendUnavailableError, so that it fails over (1200; 0: forever)",
}

ENVIRONMENT_KEYS = {
    "DATACLAY_EE_BACKEND_ID": "execution environment: ID of its backend",
    "DATACLAY_EE_THREADS": "execution environment: calls run at once (16)",
    "DATACLAY_EE_PICKLE_ALLOW": "execution environment: the Data Service's DATACLAY_PICKLE_ALLOW",
}

# dataClay 4's client settings (DC_*, from the environment or a .env file in the working directory)
# and the keys they stand for here; a DATACLAY_* key that is set wins over its DC_* twin
DATACLAY4_KEYS = {
    "DC_HOST": "DATACLAY_HOST", "DC_PORT": "DATACLAY_PORT", "DC_USERNAME": "DATACLAY_USER",
    "DC_PASSWORD": "DATACLAY_PASSWORD", "DC_DATASET": "DATACLAY_DATASET",
}
DOTENV_FILE = ".env"

_GLOBAL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")


@dataclass(frozen=True)
class Config:
    """pyclay's settings, checked; `source` names the file they were read from (or None)."""

    home: pathlib.Path
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    user: str | None = None
    password: str | None = None
    new_password: str | None = None
    dataset: str = ""
    pickle_allow: tuple[str, ...] = ()
    tls: ClusterCa | None = None
    unreachable_ms: int = DEFAULT_UNREACHABLE_MS
    source: str | None = None

    @property
    def lm_address(self) -> str:
        """host:port of the Logic Module."""
        return f"{self.host}:{self.port}"

    def overridden(self, settings: dict) -> "Config":
        """This configuration with `settings` (from session_settings) in place of its own."""
        return dataclasses.replace(self, **settings) if settings else self

    @classmethod
    def load(cls, config_file: str | os.PathLike | None = None, env: dict | None = None) -> "Config":
        """Reads `config_file` (else $DATACLAY_HOME/client.properties when it exists), then dataClay 4's
        DC_* keys of a .env file in the working directory, then the environment (its DC_* keys, then
        its DATACLAY_* keys, which win). (Execution environments use EnvironmentConfig: they read no file.)"""
        env = os.environ if env is None else env
        from_env = {DATACLAY4_KEYS[k]: v for k, v in _dotenv(pathlib.Path(DOTENV_FILE)).items()}
        from_env.update({DATACLAY4_KEYS[k]: v for k, v in env.items() if k in DATACLAY4_KEYS and v != ""})
        from_env.update({k: v for k, v in env.items() if k in KEYS and v != ""})
        if config_file is not None:
            path = pathlib.Path(config_file).expanduser()
            if not path.is_file():
                raise InvalidArgumentError(f"configuration file {str(path)!r} does not exist")
        else:
            home = pathlib.Path(from_env.get("DATACLAY_HOME") or pathlib.Path.home() / ".dataclay").expanduser()
            path = home / CLIENT_FILE
            if not path.is_file():
                path = None
        values = read_properties(path) if path is not None else {}
        values.update(from_env)
        return cls._checked(values, str(path) if path is not None else None)

    @classmethod
    def _checked(cls, values: dict[str, str], source: str | None) -> "Config":
        where = f"(from {source} or the environment)" if source else "(from the environment)"
        home = pathlib.Path(values.get("DATACLAY_HOME") or pathlib.Path.home() / ".dataclay").expanduser()
        host = values.get("DATACLAY_HOST", "127.0.0.1")
        if not host or any(c.isspace() for c in host):
            raise InvalidArgumentError(f"DATACLAY_HOST must be a host name or address, not {host!r} {where}")
        return cls(
            home=home,
            host=host,
            port=_port(values.get("DATACLAY_PORT", str(DEFAULT_PORT)), "DATACLAY_PORT", where),
            user=values.get("DATACLAY_USER"),
            password=values.get("DATACLAY_PASSWORD"),
            new_password=values.get("DATACLAY_NEW_PASSWORD"),
            dataset=values.get("DATACLAY_DATASET", ""),
            pickle_allow=_allow_list(values.get("DATACLAY_PICKLE_ALLOW", ""), where),
            tls=ClusterCa.read(values["DATACLAY_TLS_CA"], "DATACLAY_TLS_CA", where)
            if values.get("DATACLAY_TLS_CA") else None,
            unreachable_ms=_non_negative(values.get("DATACLAY_UNREACHABLE_MS", str(DEFAULT_UNREACHABLE_MS)),
                                         "DATACLAY_UNREACHABLE_MS", where),
            source=source,
        )


@dataclass(frozen=True)
class EnvironmentConfig:
    """An execution environment's settings, as its Data Service passed them (nothing secret: no
    account, no token, no address; everything it reaches goes over its link)."""

    backend_id: str
    threads: int = DEFAULT_EE_THREADS
    pickle_allow: tuple[str, ...] = ()

    @classmethod
    def load(cls, env: dict | None = None) -> "EnvironmentConfig":
        """The settings in `env` (default: this process's environment); InvalidArgumentError naming a bad key."""
        env = os.environ if env is None else env
        where = "(from the Data Service)"
        backend_id = env.get("DATACLAY_EE_BACKEND_ID", "")
        if not backend_id:
            raise InvalidArgumentError("DATACLAY_EE_BACKEND_ID is not set: an execution environment is started by "
                                       "its Data Service, which sets it")
        return cls(backend_id=backend_id,
                   threads=_positive(env.get("DATACLAY_EE_THREADS", str(DEFAULT_EE_THREADS)), "DATACLAY_EE_THREADS",
                                     where),
                   pickle_allow=_allow_list(env.get("DATACLAY_EE_PICKLE_ALLOW", ""), where))


def session_settings(host=None, port=None, user=None, password=None, dataset=None) -> dict:
    """The session settings given explicitly (dataclay.Client's arguments; None: the configured one), checked,
    as Config field -> value."""
    settings = {}
    for name, value in (("host", host), ("user", user), ("password", password), ("dataset", dataset)):
        if value is not None:
            if not isinstance(value, str) or not value or (name == "host" and any(c.isspace() for c in value)):
                raise InvalidArgumentError(f"{name} must be a non-empty string or None, not {value!r}")
            settings[name] = value
    if port is not None:
        if isinstance(port, bool) or not isinstance(port, (int, str)) or not str(port).isdigit() \
                or not 0 < int(port) < 65536:
            raise InvalidArgumentError(f"port must be a port number (1-65535) or None, not {port!r}")
        settings["port"] = int(port)
    return settings


def read_properties(path: pathlib.Path) -> dict[str, str]:
    """The KEY=VALUE lines of a configuration file; a line that is neither that nor a comment is an error."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidArgumentError(f"cannot read configuration file {str(path)!r}: {e}") from None
    values = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise InvalidArgumentError(f"{path}:{number}: expected KEY=VALUE, found {raw!r}")
        values[key.strip()] = value.strip()
    return values


def _dotenv(path: pathlib.Path) -> dict[str, str]:
    """The DC_* keys of a dataClay 4 program's .env file (`KEY=value`, `export KEY=value`, quoted values);
    its other lines are the program's and are left alone. No file: nothing."""
    try:
        text = path.read_text()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return {}
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidArgumentError(f"cannot read {str(path.resolve())!r} for its DC_* settings: {e}") from None
    values = {}
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in DATACLAY4_KEYS:
            continue
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if value:
            values[key] = value
    return values


def _port(text: str, key: str, where: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise InvalidArgumentError(f"{key} must be a port number (1-65535), not {text!r} {where}")
    return int(text)


def _positive(text: str, key: str, where: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise InvalidArgumentError(f"{key} must be a positive integer, not {text!r} {where}")
    return int(text)


def _non_negative(text: str, key: str, where: str) -> int:
    if not text.strip().isdigit():
        raise InvalidArgumentError(f"{key} must be a whole number of milliseconds (0: no limit), not {text!r} {where}")
    return int(text)


def _allow_list(text: str, where: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    for name in names:
        if not _GLOBAL_NAME.match(name):
            raise InvalidArgumentError(
                f"DATACLAY_PICKLE_ALLOW entries must be module.name (e.g. numpy.dtype), not {name!r} {where}")
    return names
