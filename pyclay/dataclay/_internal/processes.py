"""Whether a process of this machine still runs, by pid, for processes that are not our children."""
from __future__ import annotations

import pathlib
import time


def runs(pid: int) -> bool:
    """True while `pid` exists and has not exited. A zombie (exited but not yet reaped) does not run,
    but a main thread shows as one while the process's other threads still run or are still
    exiting, and that process runs until they have."""
    if pid <= 0:
        return False
    fields = _stat_fields(pathlib.Path(f"/proc/{pid}/stat"))
    if not fields:
        return False
    if fields[0] not in "ZX":
        return True
    tasks = (_stat_fields(stat) for stat in pathlib.Path(f"/proc/{pid}/task").glob("*/stat"))
    return any(task and task[0] not in "ZX" for task in tasks)


def await_exit(pids: list[int], timeout: float) -> bool:
    """Waits up to `timeout` seconds until none of `pids` runs; True if none does."""
    deadline = time.monotonic() + timeout
    while any(runs(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def group_members(group: int) -> list[int]:
    """The processes of process group `group` that run."""
    members = []
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        fields = _stat_fields(stat)
        if len(fields) > 2 and int(fields[2]) == group and runs(int(stat.parent.name)):
            members.append(int(stat.parent.name))
    return members


def _stat_fields(stat: pathlib.Path) -> list[str]:
    """The fields of a /proc stat file after the command's name (state, ppid, pgrp, ...); [] when gone."""
    try:
        return stat.read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []
