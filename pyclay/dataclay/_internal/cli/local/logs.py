"""`dataclay logs [SERVER] [--follow] [--lines N]`: the logs of the local cluster in $DATACLAY_HOME/logs,
one file per server (logicmodule.log, backend-N.log: a backend's holds its execution environments'
lines too, among them what model code prints and logs). With no SERVER every log is shown, each line
prefixed with its server's name; --follow then prints lines as they are written, like `tail -f`,
until Ctrl-C. Control characters are shown escaped, so no line can drive the terminal."""
from __future__ import annotations

import pathlib
import re
import sys
import time
from collections import deque

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.cli.common.cluster_state import ClusterState
from dataclay._internal.log_lines import escape_controls

POLL_SECONDS = 0.2


def log_files(home: pathlib.Path, server: str | None) -> dict[str, pathlib.Path]:
    """Server name -> its log file (the Logic Module first, then the backends in order): all of them, or
    only `server`'s. InvalidArgumentError when there is no local cluster or no such server."""
    logs = home / "logs"
    if not logs.is_dir():
        raise InvalidArgumentError(f"no local cluster has run with DATACLAY_HOME={home} (no {logs}): start one with "
                                   f"`dataclay start`, or set DATACLAY_HOME to the home of the cluster you started")
    state = ClusterState.load(home)
    names = [state.lm.name, *(b.name for b in state.backends)] if state is not None else []
    names += sorted((p.stem for p in logs.glob("*.log") if p.stem not in names),
                    key=lambda n: (n != "logicmodule", _natural(n)))
    files = {name: logs / f"{name}.log" for name in names if (logs / f"{name}.log").is_file()}
    if server is None:
        return files
    if server not in files:
        known = ", ".join(files) or "none"
        raise InvalidArgumentError(f"no server named {server!r} in the cluster of {home} (its servers: {known})")
    return {server: files[server]}


def _natural(name: str):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def show_logs(home: pathlib.Path, server: str | None, follow: bool, lines: int | None, out=None) -> None:
    """Prints the logs to `out` (standard output by default; the last `lines` of each when given), then, with
    `follow`, what is written next, until interrupted."""
    out = sys.stdout if out is None else out
    files = log_files(home, server)
    prefix = server is None
    offsets = {}
    for name, path in files.items():
        with open(path, "rb") as f:
            kept = deque(f, maxlen=lines) if lines is not None else f
            for raw in kept:
                _print(out, name, raw, prefix)
            offsets[name] = f.tell()
    out.flush()
    if not follow:
        return
    partial = {name: b"" for name in files}
    while True:
        time.sleep(POLL_SECONDS)
        for name, path in log_files(home, server).items():
            offset = offsets.get(name, 0)
            try:
                size = path.stat().st_size
            except FileNotFoundError:
                continue
            if size < offset:  # erased or truncated: start again from its beginning
                offset, partial[name] = 0, b""
            if size == offset:
                continue
            with open(path, "rb") as f:
                f.seek(offset)
                chunk = partial.get(name, b"") + f.read(size - offset)
            offsets[name] = size
            *complete, partial[name] = chunk.split(b"\n")
            for raw in complete:
                _print(out, name, raw, prefix)
        out.flush()


def _print(out, name: str, raw: bytes, prefix: bool) -> None:
    line = escape_controls(raw.rstrip(b"\r\n").decode("utf-8", "replace"))
    out.write(f"{name} | {line}\n" if prefix else f"{line}\n")
