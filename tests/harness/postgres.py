"""A real PostgreSQL server for tests: initdb + pg_ctl in a temporary directory on a free port.

PostgreSQL refuses to run as root, so when the tests run as root the server runs as the
`postgres` user on directories that user owns."""
from __future__ import annotations

import glob
import os
import pathlib
import pwd
import shutil
import socket
import subprocess
import tempfile


def _bin_dir() -> pathlib.Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise RuntimeError("PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin): run `make deps`")
    return pathlib.Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """Starts on `start()`, removes everything on `stop()`; `jdbc_url(db)` for the Java servers."""

    def __init__(self, durable: bool = False):
        self.durable = durable  # fsync on: a fair baseline for benchmarks; tests need no power-loss safety
        self.bin = _bin_dir()
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-pg-"))
        self.data = self.root / "data"
        self.sockets = self.root / "sock"
        self.port = _free_port()
        self.as_postgres = os.geteuid() == 0

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        command = (["runuser", "-u", "postgres", "--"] if self.as_postgres else []) + list(args)
        return subprocess.run(command, check=check, capture_output=True, text=True, timeout=120)

    def start(self) -> "PostgresServer":
        self.sockets.mkdir()
        if self.as_postgres:
            pw = pwd.getpwnam("postgres")
            for path in (self.root, self.sockets):
                os.chown(path, pw.pw_uid, pw.pw_gid)
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                  "--no-sync", "-E", "UTF8")
        options = (f"-p {self.port} -k {self.sockets} -c listen_addresses=127.0.0.1 "
                   f"-c fsync={'on' if self.durable else 'off'} -c synchronous_commit=on -c max_connections=200")
        result = self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options,
                           "-l", str(self.root / "server.log"), "-w", "-t", "60", "start", check=False)
        if result.returncode != 0:
            log = (self.root / "server.log").read_text(errors="replace") if (self.root / "server.log").exists() else ""
            raise RuntimeError(f"PostgreSQL did not start: {result.stderr}\n{log}")
        return self

    def create_database(self, name: str) -> str:
        """Creates a database and returns its JDBC URL."""
        self._run(str(self.bin / "psql"), "-h", str(self.sockets), "-p", str(self.port), "-U", "postgres",
                  "-v", "ON_ERROR_STOP=1", "-c", f'CREATE DATABASE "{name}"')
        return self.jdbc_url(name)

    def query(self, database: str, sql: str) -> str:
        """Runs `sql` with psql in `database`; returns its unaligned output without headers."""
        return self._run(str(self.bin / "psql"), "-h", str(self.sockets), "-p", str(self.port), "-U", "postgres",
                         "-d", database, "-v", "ON_ERROR_STOP=1", "-tAc", sql).stdout.strip()

    def jdbc_url(self, database: str) -> str:
        return f"jdbc:postgresql://127.0.0.1:{self.port}/{database}?user=postgres"

    def stop(self) -> None:
        if self.data.exists():
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.root, ignore_errors=True)
