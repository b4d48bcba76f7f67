"""Whether a process of this machine still runs, by pid, for processes that are not our children."""
from __future__ import annotations

import pathlib
import time


def runs(pid: int) -> bool:
    """True while `pid` exists and has not exited (a zombie, exited but not yet reaped, does not run)."""
    if pid <= 0:
        return False
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def await_exit(pids: list[int], timeout: float) -> bool:
    """Waits up to `timeout` seconds until none of `pids` runs; True if none does."""
    deadline = time.monotonic() + timeout
    while any(runs(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
