"""CPU time and process trees from /proc, shared by the benchmarks that say how much CPU each process
kind spends per call (issue 25's target is a sum over every process a call crosses)."""
from __future__ import annotations

import os
import pathlib

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of `pid` (all its threads; not its children), in seconds."""
    # the command name may hold spaces and parentheses: the fields that follow its last ')' are
    # state (field 3) ... utime (14) and stime (15)
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS_PER_SECOND


def descendants(pid: int) -> list[int]:
    """Every live process below `pid` (children of any of its threads, recursively)."""
    found = []
    for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except FileNotFoundError:  # the thread ended while we walked
            continue
        for child in map(int, children):
            found += [child, *descendants(child)]
    return found


def snapshot(kinds: dict[str, list[int]]) -> dict[str, float]:
    """kind -> CPU seconds summed over its processes (a process gone since counts 0)."""
    total = {}
    for kind, pids in kinds.items():
        total[kind] = 0.0
        for pid in pids:
            try:
                total[kind] += cpu_seconds(pid)
            except FileNotFoundError:
                pass
    return total
