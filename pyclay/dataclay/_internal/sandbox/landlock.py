"""Landlock through its raw system calls: which access rights each ABI version has, and a ruleset
that lets the process read (and execute) some hierarchies, write one, and nothing else.

Degrades with the kernel: a right an ABI lacks is neither handled nor granted (handling it would
fail with EINVAL), so an older kernel enforces less, never refuses. What each ABI adds:
1 files and directories; 2 REFER (linking/renaming across directories; before it, always refused);
3 TRUNCATE; 4 TCP bind/connect; 5 IOCTL_DEV; 6 scopes (signals, abstract UNIX sockets);
7 only audit logging flags."""
from __future__ import annotations

import ctypes
import os
import stat

from ._libc import syscall

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # the same on x86_64 and aarch64
CREATE_RULESET_VERSION = 1 << 0
RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

_FS_BY_ABI = {1: (1 << 13) - 1, 2: REFER, 3: TRUNCATE, 5: IOCTL_DEV}
# rights that make sense on a file rule; the kernel refuses directory-only rights on a file
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ_RIGHTS = EXECUTE | READ_FILE | READ_DIR
# the private tmp: everything but executing what was written there and making device nodes
WRITE_RIGHTS = (READ_FILE | READ_DIR | WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SOCK
                | MAKE_FIFO | MAKE_SYM | REFER | TRUNCATE)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is not built in, not enabled at boot
    (EOPNOTSUPP), or refused by a container's own seccomp filter (often EPERM)."""
    try:
        return syscall(SYS_CREATE_RULESET, None, 0, CREATE_RULESET_VERSION, what="landlock_create_ruleset")
    except OSError:
        return 0


def handled_fs(version: int) -> int:
    """The file-system rights ABI `version` knows (all of them are handled, i.e. denied unless granted)."""
    return sum(bits for since, bits in _FS_BY_ABI.items() if version >= since)


def handled_net(version: int) -> int:
    """The network rights handled: TCP bind and connect from ABI 4 (no rule grants them)."""
    return NET_BIND_TCP | NET_CONNECT_TCP if version >= 4 else 0


def scopes(version: int) -> int:
    """The scopes applied: signals and abstract UNIX sockets stay inside the sandbox from ABI 6."""
    return SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if version >= 6 else 0


def granted(version: int, wanted: int, is_dir: bool) -> int:
    """`wanted` cut to what ABI `version` handles and what a rule on a file or directory may hold."""
    return wanted & handled_fs(version) & (~0 if is_dir else FILE_RIGHTS)


class Ruleset:
    """A Landlock ruleset being built; restrict() puts the calling thread (and its future children)
    under it for good."""

    def __init__(self, version: int):
        self.version = version
        attr = _RulesetAttr(handled_fs(version), handled_net(version), scopes(version))
        # older kernels accept the larger struct as long as the fields they do not know are zero
        self._fd = syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0,
                           what="landlock_create_ruleset")

    def allow(self, path: str, wanted: int) -> None:
        """Grants `wanted` (as far as the ABI knows it) on `path` and everything beneath it."""
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        try:
            rule = _PathBeneathAttr(granted(self.version, wanted, stat.S_ISDIR(os.fstat(fd).st_mode)), fd)
            syscall(SYS_ADD_RULE, self._fd, RULE_PATH_BENEATH, ctypes.byref(rule), 0,
                    what=f"landlock_add_rule({path})")
        finally:
            os.close(fd)

    def restrict(self) -> None:
        """Enforces the ruleset on this thread; needs no_new_privs (or CAP_SYS_ADMIN) first."""
        try:
            syscall(SYS_RESTRICT_SELF, self._fd, 0, what="landlock_restrict_self")
        finally:
            os.close(self._fd)
