"""Who the confined process is and what it may still become: the switch to its slot's uid,
capabilities, no_new_privs, the parent-death signal and dumpability."""
from __future__ import annotations

import ctypes
import errno
import os
import signal

from ._libc import checked, libc, prctl
from .profiles import SandboxError

PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
PR_CAPBSET_READ, PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 23, 24, 47, 4
CAPABILITY_VERSION_3 = 0x20080522
CAP_SETPCAP = 8


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def capabilities() -> tuple[int, int, int]:
    """This thread's (effective, permitted, inheritable) capability sets, as 64-bit masks."""
    header, data = _CapHeader(CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    checked(libc.capget(ctypes.byref(header), data), "capget")
    return tuple(getattr(data[0], f) | getattr(data[1], f) << 32
                 for f in ("effective", "permitted", "inheritable"))


def bounding_set() -> int:
    """The capability bounding set, as a mask."""
    mask, cap = 0, 0
    while True:
        try:
            if prctl(PR_CAPBSET_READ, cap):
                mask |= 1 << cap
        except OSError as e:  # EINVAL past the last capability this kernel knows
            if e.errno == errno.EINVAL:
                return mask
            raise
        cap += 1


def drop_bounding_and_ambient() -> None:
    """Clears the ambient set and, while CAP_SETPCAP is held, the bounding set. Without CAP_SETPCAP
    (an ordinary user) the bounding set stays as it was, which no_new_privs makes harmless: nothing
    can be gained by execve any more."""
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    mask = bounding_set()
    if mask and capabilities()[0] & (1 << CAP_SETPCAP):
        for cap in range(mask.bit_length()):
            if mask & (1 << cap):
                prctl(PR_CAPBSET_DROP, cap)
        if bounding_set():
            raise SandboxError(f"the capability bounding set is still {bounding_set():#x} after dropping it")


def drop_capabilities() -> None:
    """Empties the effective, permitted and inheritable sets, and checks they stayed empty."""
    header, data = _CapHeader(CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    checked(libc.capset(ctypes.byref(header), data), "capset")
    if capabilities() != (0, 0, 0):
        raise SandboxError(f"capabilities are still held after dropping them: {capabilities()}")


def switch_user(uid: int, gid: int) -> None:
    """Becomes uid/gid with no supplementary groups, for good (needs CAP_SETUID and CAP_SETGID); checks
    that root cannot be regained."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid) or os.getgroups():
        raise SandboxError(f"the switch to uid {uid} / gid {gid} did not take: {os.getresuid()}, "
                           f"{os.getresgid()}, groups {os.getgroups()}")
    try:
        os.setuid(0)
    except PermissionError:
        return
    raise SandboxError(f"uid {uid} could become root again")


def die_with_parent(parent_pid: int | None) -> None:
    """SIGKILL when the parent dies; then checks the parent is still `parent_pid` (it may have died
    before). Must follow every credential change, which clears the setting."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent_pid is not None and os.getppid() != parent_pid:
        raise SandboxError(f"the parent process (pid {parent_pid}) is gone")


def make_undumpable() -> None:
    """No core dumps and no ptrace or /proc/<pid>/mem access by other processes of the same user.
    An execve resets it (the exec wrapper's command is dumpable again); RLIMIT_CORE=0 remains."""
    prctl(PR_SET_DUMPABLE, 0)


def set_no_new_privs() -> None:
    """execve can no longer grant privileges (set-uid bits, file capabilities); Landlock and seccomp
    need it from a process without CAP_SYS_ADMIN."""
    prctl(PR_SET_NO_NEW_PRIVS, 1)
