"""`dataclay stop --erase`: what a stopped local cluster leaves on the node, overwritten and removed.

The stores are erased by the Data Service's own eraser (`io.dataclay.ds.StoreEraseMain`, which
knows each engine's pool layout and refuses a pool still in use); the state under DATACLAY_HOME is
erased here. Every file is overwritten with zeros and synced before it is unlinked, so a copy of it
reachable some other way (a hard link, an open descriptor) holds zeros too. Only what `dataclay
start` and the servers make is touched: anything else found in DATACLAY_HOME is left and reported."""
from __future__ import annotations

import os
import pathlib
import re
import stat
import subprocess

from dataclay.exceptions import DataClayException

# What a local cluster keeps in DATACLAY_HOME (cluster.json last: it records where the pools are).
HOME_ENTRIES = ("client.properties", "cluster.secret", "metrics.token", "tls", "logs", "lm", "backends",
                "cluster.json")
_TEMP_FILE = re.compile(r"^\.(client\.properties|cluster\.json)\..+")
_CHUNK = 1 << 20
ERASE_TIMEOUT = 600.0


class EraseError(DataClayException):
    """Something of the cluster could not be erased; the message says what and why."""

    code = "INTERNAL"


def erase_stores(java: str, jar: pathlib.Path, pools: dict[str, pathlib.Path], env: dict[str, str]) -> list[str]:
    """Erases each backend's store (`pools`: backend name -> pool directory) with the Data Service's
    eraser; the engine and any database URL travel in `env`, never on the command line."""
    if not pools:
        return []
    if not jar.is_file():
        raise EraseError(f"{jar} is missing: run `make build` (or set DATACLAY_JARS); nothing was erased")
    args = [f"{name}={path}" for name, path in pools.items()]
    result = subprocess.run([java, "-cp", str(jar), "io.dataclay.ds.StoreEraseMain", *args], env=env,
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=ERASE_TIMEOUT)
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    if result.returncode != 0:
        raise EraseError("\n".join(lines + [line for line in result.stderr.splitlines() if line.strip()])
                         or f"the store eraser failed with exit code {result.returncode}")
    return lines


def erase_home(home: pathlib.Path) -> tuple[list[str], list[str]]:
    """Erases the cluster's state in `home`; returns (what was erased, what was left as not ours).
    `home` itself is removed when nothing is left in it."""
    erased, left = [], []
    if not home.is_dir():
        return erased, left
    temps = [p for p in home.iterdir() if _TEMP_FILE.match(p.name)]
    for path in temps + [home / name for name in HOME_ENTRIES]:
        if os.path.lexists(path):
            is_dir = path.is_dir() and not path.is_symlink()
            files, size = erase_tree(path)
            erased.append(f"{path.name}/ ({files} files, {size} bytes)" if is_dir else f"{path.name} ({size} bytes)")
    left = sorted(p.name for p in home.iterdir())
    if not left:
        home.rmdir()
    return erased, left


def erase_tree(path: pathlib.Path) -> tuple[int, int]:
    """Overwrites and removes `path` (a file, or a directory and everything under it; symbolic links
    are removed, never followed); returns (files, bytes) overwritten."""
    mode = os.lstat(path).st_mode
    if stat.S_ISDIR(mode):
        files = size = 0
        for child in path.iterdir():
            f, s = erase_tree(child)
            files, size = files + f, size + s
        path.rmdir()
        return files, size
    size = overwrite(path) if stat.S_ISREG(mode) else 0
    path.unlink()
    return (1, size) if stat.S_ISREG(mode) else (0, 0)


def overwrite(path: pathlib.Path) -> int:
    """Writes zeros over the whole file and syncs it; returns its size."""
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
    try:
        size = os.fstat(fd).st_size
        zeros = bytes(min(_CHUNK, size))
        done = 0
        while done < size:
            done += os.pwrite(fd, zeros[:min(len(zeros), size - done)], done)
        os.fsync(fd)
        return size
    finally:
        os.close(fd)


def redact_url(url: str) -> str:
    """A JDBC URL with its password hidden, fit for messages."""
    url = re.sub(r"(?i)(password=)[^&;]*", r"\1***", url)
    return re.sub(r"//([^/@:]*):[^/@]*@", r"//\1:***@", url)
