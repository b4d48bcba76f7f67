"""A seccomp filter built with libseccomp (Debian: libseccomp2) through ctypes: everything is
allowed except the calls below, which fail with EPERM (ENOSYS for clone3) so that code sees an
OSError instead of dying. A deny-list, so a system call newer than this list is allowed: Landlock,
the namespaces and the uid are what confine; this filter takes away the kernel interfaces confined
code has no use for and that have been the way out of sandboxes before."""
from __future__ import annotations

import ctypes
import errno
import os

ARCHITECTURES = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}  # libseccomp's tokens (AUDIT_ARCH_*)
ACT_ALLOW, ACT_KILL_PROCESS = 0x7FFF0000, 0x80000000
ATTR_ACT_BADARCH, ATTR_CTL_TSYNC = 2, 4
CMP_NE, CMP_MASKED_EQ = 1, 7
LOW32 = 0xFFFFFFFF  # int arguments: the kernel reads the low 32 bits, so compare only those

# Syscalls added after libseccomp 2.5.4 (Debian 12) was released, whose names it cannot resolve; new
# syscalls share one number on x86_64 and aarch64.
NEWER_SYSCALLS = {"fchmodat2": 452, "setxattrat": 463, "removexattrat": 466, "open_tree_attr": 467}

# Refused in every mode: tracing and reading other processes, namespaces and mounts, kernel keyrings,
# eBPF, perf, userfaultfd, io_uring (its own path around the filter), modules, kexec, reboot, swap,
# accounting, quotas, file handles (bypass path checks), fanotify, the kernel log, personality
# (ASLR off for what it executes; even a query is refused: its argument is an int, which a caller may
# sign-extend, and seccomp compares 64 bits), port I/O, the clock and host names, every network endpoint.
DENIED_ALWAYS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "mount", "umount2", "pivot_root", "chroot", "setns", "unshare", "fsopen", "fsconfig", "fsmount",
    "fspick", "move_mount", "open_tree", "open_tree_attr", "mount_setattr",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
    "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "open_by_handle_at", "name_to_handle_at",
    "fanotify_init", "syslog", "iopl", "ioperm", "settimeofday", "clock_settime", "clock_adjtime",
    "adjtimex", "sethostname", "setdomainname", "vhangup", "uselib", "personality",
    # no network endpoint at all; socketpair() stays (asyncio uses it), and so do send() and recv()
    "connect", "bind", "listen", "accept", "accept4",
)
# Kernel mode has no namespaces and runs as the Data Service's own user where that is not root:
# - a file it may read it could still chmod, chown, label or touch (no read-only mounts);
# - a datagram can go to any socket path of the host without connect(): sendto() with an address,
#   and sendmsg()/sendmmsg(), whose address seccomp cannot see (bwrap shows no host socket);
# - System V IPC and POSIX message queues of the same user are reachable (no IPC namespace).
DENIED_WITHOUT_NAMESPACES = (
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
    "setxattr", "lsetxattr", "fsetxattr", "setxattrat", "removexattr", "lremovexattr", "fremovexattr",
    "removexattrat", "utime", "utimes", "utimensat", "futimesat",
    "sendmsg", "sendmmsg",
    "shmget", "shmat", "shmctl", "semget", "semop", "semtimedop", "semctl", "msgget", "msgsnd", "msgrcv",
    "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
)
# no pid namespace: children must stay in the process group the Data Service kills
DENIED_OUT_OF_GROUP = ("setsid", "setpgid")
# the same namespaces `unshare` would make; CLONE_NEWTIME (0x80) is not usable with clone()
CLONE_NAMESPACES = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
TIOCSTI, TIOCLINUX = 0x5412, 0x541C  # push input into (or hijack) the terminal
PR_SET_PDEATHSIG, PR_SET_DUMPABLE = 1, 4
AF_UNIX = 1  # the socket module costs 3 ms to import


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


def errno_action(code: int) -> int:
    """SCMP_ACT_ERRNO(code)."""
    return 0x00050000 | (code & 0xFFFF)


def library() -> ctypes.CDLL | None:
    """libseccomp, or None when it is not installed."""
    try:
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError:
        return None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_arch_native.restype = ctypes.c_uint32
    return lib


def problem() -> str | None:
    """Why no filter can be installed here (libseccomp missing, an architecture the rules were not
    written for), or None."""
    lib = library()
    if lib is None:
        return "libseccomp.so.2 is missing (Debian: libseccomp2)"
    machine = os.uname().machine
    if ARCHITECTURES.get(machine) != lib.seccomp_arch_native():
        return (f"the seccomp rules are written for {' and '.join(ARCHITECTURES)}; this process runs on {machine} "
                f"(libseccomp architecture {lib.seccomp_arch_native():#x})")
    return None


class Filter:
    """A filter under construction: default allow, plus the refusals added."""

    def __init__(self, lib: ctypes.CDLL):
        self._lib = lib
        self._ctx = lib.seccomp_init(ACT_ALLOW)
        if not self._ctx:
            raise OSError(errno.ENOMEM, "seccomp_init failed")
        self._set(ATTR_ACT_BADARCH, ACT_KILL_PROCESS)  # a 32-bit syscall entry (int 0x80) ends the process
        self._set(ATTR_CTL_TSYNC, 1)  # all threads; confine() also insists there is only one

    def refuse(self, name: str, code: int = errno.EPERM, *conditions: tuple[int, int, int, int]) -> bool:
        """Makes `name` fail with `code` when all (arg, op, a, b) conditions hold; False when this
        architecture has no such syscall."""
        number = self._lib.seccomp_syscall_resolve_name(name.encode())
        if number < 0:
            number = NEWER_SYSCALLS.get(name, -1)
        if number < 0:
            return False
        array = (_ArgCmp * max(1, len(conditions)))(*[_ArgCmp(*c) for c in conditions])
        rc = self._lib.seccomp_rule_add_array(self._ctx, errno_action(code), number, len(conditions), array)
        if rc < 0:
            raise OSError(-rc, f"seccomp rule for {name}: {os.strerror(-rc)}")
        return True

    def load(self) -> None:
        """Installs the filter on every thread of the process, for good, and frees it."""
        try:
            rc = self._lib.seccomp_load(self._ctx)
            if rc < 0:
                raise OSError(-rc, f"seccomp_load: {os.strerror(-rc)}")
        finally:
            self._lib.seccomp_release(self._ctx)

    def _set(self, attr: int, value: int) -> None:
        rc = self._lib.seccomp_attr_set(self._ctx, attr, value)
        if rc < 0:
            raise OSError(-rc, f"seccomp_attr_set({attr}): {os.strerror(-rc)}")


def build(lib: ctypes.CDLL, mode: str, own_pid: int, signals_scoped: bool, truncate_handled: bool) -> Filter:
    """The filter for `mode`: "none" only keeps children in the process group; "bwrap" and "kernel"
    refuse everything above. Without Landlock's signal scope, signals may only go to `own_pid`."""
    f = Filter(lib)
    if mode != "bwrap":
        for name in DENIED_OUT_OF_GROUP:
            f.refuse(name)
    if mode == "none":
        return f
    for name in DENIED_ALWAYS:
        f.refuse(name)
    f.refuse("clone3", errno.ENOSYS)  # its flags are behind a pointer; glibc falls back to clone()
    for flag in CLONE_NAMESPACES:
        f.refuse("clone", errno.EPERM, (0, CMP_MASKED_EQ, flag, flag))
    f.refuse("socket", errno.EPERM, (0, CMP_NE, AF_UNIX, 0))
    for request in (TIOCSTI, TIOCLINUX):
        f.refuse("ioctl", errno.EPERM, (1, CMP_MASKED_EQ, LOW32, request))
    for option in (PR_SET_PDEATHSIG, PR_SET_DUMPABLE):  # dying with the parent, and staying undumpable
        f.refuse("prctl", errno.EPERM, (0, CMP_MASKED_EQ, LOW32, option))
    if mode == "kernel":
        for name in DENIED_WITHOUT_NAMESPACES:
            f.refuse(name)
        f.refuse("sendto", errno.EPERM, (4, CMP_NE, 0, 0))  # send() passes no address; a datagram to a path does
        if not truncate_handled:  # Landlock before ABI 3 cannot refuse truncate() on a readable path
            f.refuse("truncate")
    if not signals_scoped:
        for name in ("kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
            f.refuse(name, errno.EPERM, (0, CMP_NE, own_pid, 0))
        f.refuse("pidfd_send_signal")
    return f
