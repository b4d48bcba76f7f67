"""Resource limits (rlimits) of the confined process and everything it starts.

RLIMIT_NPROC counts the tasks (processes and threads) of a real uid, per user namespace since Linux
5.14: in bwrap mode (its own user namespace) or under a slot's own uid it bounds exactly this
sandbox. Where the process shares the Data Service's user with no namespace of its own (kernel or
none mode, not root), it counts the Data Service's threads too, so the bound is set to the user's
tasks at start plus max_processes: a fork bomb stops there, but the allowance shrinks or grows as
the rest of that user's tasks do."""
from __future__ import annotations

import os
import resource

from .profiles import Limits, SandboxError

MB = 1 << 20


def tasks_of_user(uid: int) -> int:
    """How many tasks (threads) processes whose real uid is `uid` have now, read from /proc."""
    count = 0
    with os.scandir("/proc") as entries:
        for entry in entries:
            try:
                # the owner of /proc/<pid> is its effective uid: a cheap first cut before reading status
                if not entry.name.isdigit() or entry.stat().st_uid != uid:
                    continue
                with open(f"/proc/{entry.name}/status", "rb") as f:
                    status = f.read()
            except OSError:  # exited meanwhile
                continue
            fields = dict(line.split(b":", 1) for line in status.splitlines() if b":" in line)
            if int(fields[b"Uid"].split()[0]) == uid:
                count += int(fields[b"Threads"])
    return count


def wanted(limits: Limits, user_tasks: int) -> dict[int, tuple[int, int]]:
    """The (soft, hard) pairs to set, by resource; `user_tasks` is added to the process bound when
    its scope is "user"."""
    result = {resource.RLIMIT_CORE: (0, 0)}
    if limits.memory_mb:
        result[resource.RLIMIT_AS] = (limits.memory_mb * MB,) * 2
    if limits.max_processes:
        bound = limits.max_processes + (user_tasks if limits.nproc_scope == "user" else 0)
        result[resource.RLIMIT_NPROC] = (bound, bound)
    if limits.open_files:
        result[resource.RLIMIT_NOFILE] = (limits.open_files,) * 2
    if limits.cpu_seconds:  # SIGXCPU at the soft limit, so it can say why; SIGKILL a second later
        result[resource.RLIMIT_CPU] = (limits.cpu_seconds, limits.cpu_seconds + 1)
    if limits.file_mb:
        result[resource.RLIMIT_FSIZE] = (limits.file_mb * MB,) * 2
    return result


def too_high(limits: Limits) -> list[str]:
    """The limits above what this process may set (its hard limits; only lowering is possible)."""
    problems = []
    for which, (_, hard) in wanted(limits, 0).items():
        current = resource.getrlimit(which)[1]
        if current != resource.RLIM_INFINITY and hard > current:
            problems.append(f"{_NAMES[which]} {hard} is above this user's hard limit {current}")
    return problems


def apply(limits: Limits, user_tasks: int) -> None:
    """Sets every limit, soft and hard, so nothing started later can raise them again."""
    for which, pair in wanted(limits, user_tasks).items():
        try:
            resource.setrlimit(which, pair)
        except (ValueError, OSError) as e:
            raise SandboxError(f"cannot set {_NAMES[which]} to {pair}: {e}") from None


_NAMES = {resource.RLIMIT_CORE: "RLIMIT_CORE", resource.RLIMIT_AS: "RLIMIT_AS", resource.RLIMIT_NPROC: "RLIMIT_NPROC",
          resource.RLIMIT_NOFILE: "RLIMIT_NOFILE", resource.RLIMIT_CPU: "RLIMIT_CPU",
          resource.RLIMIT_FSIZE: "RLIMIT_FSIZE"}
