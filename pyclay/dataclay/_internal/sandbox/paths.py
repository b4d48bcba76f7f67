"""Which paths a confined interpreter gets to read, and which it must never see."""
from __future__ import annotations

import os
import stat
import sys
from collections import namedtuple

# what any dynamically linked program needs; /bin, /lib* are symlinks into /usr on merged-/usr systems
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# the few files of /etc a program reads without being asked (the linker cache, the time zone)
ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime")
READ_DEVICES = ("/dev/zero", "/dev/random", "/dev/urandom")
WRITE_DEVICES = ("/dev/null", "/dev/full")
# subtrees never exposed, nor anything inside them: pools, sockets, other processes, the kernel
HIDDEN = ("/dev/shm", "/tmp", "/var/tmp", "/proc", "/sys", "/run", "/dev", "/boot",
          "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d",
          "/etc/ssh", "/etc/ssl/private", "/etc/munge", "/etc/slurm")
# directories never exposed whole (their subdirectories may be: a Python under ~/.pyenv)
NEVER_WHOLE = ("/", "/root", "/home", "/etc", "/var")


class Rules(namedtuple("Rules", "hidden never_whole")):
    """The forbidden paths of one launch: HIDDEN plus the cluster's home and pool, NEVER_WHOLE plus
    the caller's home."""

    __slots__ = ()

    @staticmethod
    def for_environment(environ: dict[str, str]) -> Rules:
        """The rules for a launcher started with `environ`."""
        home = environ.get("HOME") or os.path.expanduser("~")
        cluster = environ.get("DATACLAY_HOME") or os.path.join(home, ".dataclay")
        hidden = [*HIDDEN, cluster]
        if environ.get("DATACLAY_STORE_PATH"):
            hidden.append(environ["DATACLAY_STORE_PATH"])
        return Rules(tuple(_both(hidden)), tuple(_both([*NEVER_WHOLE, home])))

    def refusal(self, path: str) -> str | None:
        """Why `path` may not be exposed, or None when it may; symlinks are judged by where they lead too."""
        for candidate in {os.path.normpath(path), os.path.realpath(path)}:
            for hidden in self.hidden:
                if _within(candidate, hidden) or _within(hidden, candidate):
                    return f"{path} is or holds {hidden}, which confined code must never see"
            for whole in self.never_whole:
                if _within(whole, candidate):
                    return f"{path} holds all of {whole}; expose only the subdirectories needed"
        return None

    def tmp_refusal(self, path: str) -> str | None:
        """Why `path` may not be the private writable directory: it may lie anywhere (under /tmp, in
        the cluster home) but must not hold anything forbidden."""
        for candidate in {os.path.normpath(path), os.path.realpath(path)}:
            for forbidden in (*self.hidden, *self.never_whole):
                if _within(forbidden, candidate):
                    return f"{path} holds {forbidden}"
        return None


class ReadSet(namedtuple("ReadSet", "paths symlinks")):
    """What to expose read-only: real directories and files (no one inside another), and symlinks
    (target as written, link path) to recreate where their parent is not exposed (/bin -> usr/bin)."""

    __slots__ = ()


def interpreter_paths() -> list[str]:
    """The running interpreter's installation, virtualenv and import path: what the same interpreter
    needs inside the sandbox (the working directory excluded)."""
    found = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    cwd = os.getcwd()
    found += [p for p in sys.path if p and os.path.isabs(p) and p != cwd and os.path.isdir(p)]
    return found


def system_paths() -> list[str]:
    """The system's libraries and programs, and the few files of /etc they read."""
    return [p for p in (*SYSTEM_DIRS, *ETC_FILES) if os.path.lexists(p)]


def read_set(requested: list[str]) -> ReadSet:
    """`requested` (existing paths) made minimal: real paths, none under another, plus the symlinks
    among them whose own parent directory is not exposed."""
    real = sorted({os.path.realpath(p) for p in requested})
    kept: list[str] = []
    for p in real:
        if not any(_within(p, k) for k in kept):
            kept.append(p)
    links = []
    for p in sorted(set(requested)):
        if os.path.islink(p) and not any(_within(os.path.dirname(p), k) for k in kept):
            links.append((os.readlink(p), p))
    return ReadSet(tuple(kept), tuple(links))


def covered(path: str, paths: tuple[str, ...]) -> bool:
    """True when `path` (resolved) lies within one of `paths`."""
    real = os.path.realpath(path)
    return any(_within(real, p) for p in paths)


def unreachable_by_others(path: str) -> str | None:
    """The first directory on the way to `path`, or `path` itself, that a user who owns nothing and is
    in no group cannot pass or read (by mode bits); None when it can."""
    real = os.path.realpath(path)
    parts = real.split("/")[1:]
    for i in range(len(parts)):
        step = "/" + "/".join(parts[:i])
        if not os.stat(step).st_mode & stat.S_IXOTH:
            return f"{step} (mode {stat.S_IMODE(os.stat(step).st_mode):o})"
    mode = os.stat(real).st_mode
    needed = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    if mode & needed != needed:
        return f"{real} (mode {stat.S_IMODE(mode):o})"
    return None


def _within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _both(paths: list[str]) -> list[str]:
    """Each path as written (made absolute) and resolved: a symlinked home must be caught either way."""
    return sorted({q for p in paths for q in (os.path.abspath(p), os.path.realpath(p))})
