"""pyclay's settings (client and execution environment), read from the keys settings_table.py
lists with their types and defaults: the only code of the client that reads the environment. Values come from a KEY=VALUE file ('#' comments; the
format of $DATACLAY_HOME/client.properties) and environment variables that are set (non-empty)
override the file."""
from __future__ import annotations

import dataclasses
import os
import pathlib
from dataclasses import dataclass

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal import settings_table as table
from dataclay._internal.rpc.tls import ClusterCa
from dataclay._internal.settings_table import CLIENT, DATACLAY4_ALIASES as DATACLAY4_KEYS, DEFAULT_PORT, \
    DEFAULT_UNREACHABLE_MS

DEFAULT_EE_THREADS = int(table.setting("DATACLAY_EE_THREADS").default)
CLIENT_FILE = "client.properties"
KEYS = table.keys_read_by(CLIENT)
DOTENV_FILE = ".env"


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
        # an empty DATACLAY_HOME or DATACLAY_TLS_CA in the file counts as unset
        values = {k: v for k, v in values.items() if v or k not in ("DATACLAY_HOME", "DATACLAY_TLS_CA")}
        tls_ca = table.text("DATACLAY_TLS_CA", values)
        return cls(
            home=table.value("DATACLAY_HOME", values, where),
            host=table.value("DATACLAY_HOST", values, where),
            port=table.value("DATACLAY_PORT", values, where),
            user=table.value("DATACLAY_USER", values, where),
            password=table.value("DATACLAY_PASSWORD", values, where),
            new_password=table.value("DATACLAY_NEW_PASSWORD", values, where),
            dataset=table.value("DATACLAY_DATASET", values, where) or "",
            pickle_allow=_allow_list("DATACLAY_PICKLE_ALLOW", values, where),
            tls=ClusterCa.read(tls_ca, "DATACLAY_TLS_CA", where) if tls_ca else None,
            unreachable_ms=table.value("DATACLAY_UNREACHABLE_MS", values, where),
            source=source,
        )


@dataclass(frozen=True)
class EnvironmentConfig:
    """An execution environment's settings, as its Data Service passed them (nothing secret: no
    account, no token, no address; everything it reaches goes over its link)."""

    backend_id: str
    threads: int = DEFAULT_EE_THREADS
    pickle_allow: tuple[str, ...] = ()
    resident_bytes: int = 0  # stored bytes of objects kept in memory, at most (0: no bound)

    @classmethod
    def load(cls, env: dict | None = None) -> "EnvironmentConfig":
        """The settings in `env` (default: this process's environment); InvalidArgumentError naming a bad key."""
        env = os.environ if env is None else env
        where = "(from the Data Service)"
        backend_id = table.text("DATACLAY_EE_BACKEND_ID", env) or ""
        if not backend_id:
            raise InvalidArgumentError("DATACLAY_EE_BACKEND_ID is not set: an execution environment is started by "
                                       "its Data Service, which sets it")
        return cls(backend_id=backend_id,
                   threads=table.value("DATACLAY_EE_THREADS", env, where),
                   pickle_allow=_allow_list("DATACLAY_EE_PICKLE_ALLOW", env, where),
                   resident_bytes=table.value("DATACLAY_EE_RESIDENT_MB", env, where) << 20)


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


def _allow_list(key: str, values: dict, where: str) -> tuple[str, ...]:
    return table.value(key, values, where) or ()
