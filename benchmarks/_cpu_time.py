"""CPU time and process trees from /proc, shared by the benchmarks that say how much CPU each process
kind spends per call (issue 25's target is a sum over every process a call crosses)."""
from __future__ import annotations

import os
import pathlib

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def _stat_seconds(stat: pathlib.Path) -> float:
    """utime + stime, in seconds, from a /proc `stat` file (a process's or a thread's)."""
    # the command name may hold spaces and parentheses: the fields that follow its last ')' are
    # state (field 3) ... utime (14) and stime (15)
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS_PER_SECOND


def cpu_seconds(pid: int) -> float:
    """utime + stime of `pid` (all its threads; not its children), in seconds."""
    return _stat_seconds(pathlib.Path(f"/proc/{pid}/stat"))


def _threads(pid: int):
    """(thread id, name, utime + stime in seconds) of each live thread of `pid`."""
    for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            seconds = _stat_seconds(task / "stat")
        except (FileNotFoundError, ProcessLookupError):  # the thread ended while we walked
            continue
        yield int(task.name), name, seconds


def thread_seconds(pid: int) -> dict[int, float]:
    """thread id -> utime + stime in seconds, for each live thread of `pid`."""
    return {tid: seconds for tid, _, seconds in _threads(pid)}


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


# A JVM thread's kind, from the start of its name as the kernel keeps it (15 characters): the kinds a
# server's CPU per call splits into. The first prefix that matches wins.
JVM_THREAD_KINDS = (
    # Netty's event loops, gRPC's and the call port's, and the calls served inline on them
    ("network", ("grpc-default-wo", "callport-loop-")),
    ("pool", ("grpc-default-ex", "dataclay-ds-cal")),  # calls that may block, and the DS's own call pool
    ("environment link", ("dataclay-ds-ee-",)),  # each environment's result reader: stores results, answers
    ("GC", ("GC Thread", "G1 ", "VM Thread")),
    ("JIT", ("C1 CompilerThre", "C2 CompilerThre")),
)
JVM_KINDS = tuple(kind for kind, _ in JVM_THREAD_KINDS) + ("other",)


def jvm_thread_kind(name: str) -> str:
    """The kind (one of JVM_KINDS) of a JVM thread named `name` in /proc/<pid>/task/<tid>/comm."""
    for kind, prefixes in JVM_THREAD_KINDS:
        if name.startswith(prefixes):
            return kind
    return "other"


def thread_cpu(pid: int) -> dict[int, tuple[str, float]]:
    """thread id -> (kind, CPU seconds) of each live thread of the JVM `pid` (kinds: JVM_KINDS)."""
    return {tid: (jvm_thread_kind(name), seconds) for tid, name, seconds in _threads(pid)}


def cpu_by_thread_kind(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU seconds per thread kind between two thread_cpu() snapshots of one JVM: each thread alive at
    `after` counts from `before` (or from its start); a thread that ended between them is not counted."""
    total = dict.fromkeys(JVM_KINDS, 0.0)
    for tid, (kind, seconds) in after.items():
        total[kind] += seconds - before.get(tid, (kind, 0.0))[1]
    return total
