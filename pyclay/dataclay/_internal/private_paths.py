"""Paths that belong to the servers' user: directories mode 0700 and files 0600, owned by that user.

Every directory a cluster keeps state in (DATACLAY_HOME and what dataClay makes in it, the pool
root and each pool, a Slurm job's directory and its node-local directories) is made or checked
here before anything is written to it or read from it. A path that another user owns, that group
or others may read or enter, or that is a symbolic link another user owns, is refused with a
message naming it, its owner and mode, and what to run. Nothing is tightened silently: a path
another user could reach may already have been read, or replaced by theirs.

The directories above such a path need only be safe from replacement: owned by root or this user,
and writable by others only when sticky (as /tmp and /dev/shm are), so nobody else can rename
what is in them. The Java servers check their own directories the same way
(`io.dataclay.common.PrivatePaths`)."""
from __future__ import annotations

import errno
import os
import pathlib
import pwd
import stat

from dataclay.exceptions import InvalidArgumentError

SHOWN = 8  # problems listed in one message; the rest are counted


class UnsafePathError(InvalidArgumentError):
    """A path is not private to this user; the message names it and says what to do."""


def ensure_private_dir(path: str | os.PathLike, what: str) -> pathlib.Path:
    """Makes directory `path` (and any missing parent) with mode 0700, or checks the one there:
    owned by this user, no group or other access. The directories above it must be safe from
    replacement (see the module's doc). Returns the path with its symbolic links resolved, which
    callers use from then on."""
    path = pathlib.Path(os.path.abspath(path))
    check_ancestors(path, what)
    missing = []
    for part in [path, *path.parents]:
        if os.path.lexists(part):
            break
        missing.append(part)
    for part in reversed(missing):
        try:
            os.mkdir(part, 0o700)
        except FileExistsError:
            pass  # made meanwhile, by us or by someone else: the checks below tell which
    for part in reversed(missing[1:]):
        check_private_dir(part, f"{what}'s parent")
    return check_private_dir(path, what)


def check_private_dir(path: str | os.PathLike, what: str) -> pathlib.Path:
    """Refuses `path` unless it is a directory of this user's with no group or other access (a
    symbolic link to one is followed only when this user or root owns the link). Returns the
    resolved path."""
    path = pathlib.Path(path)
    info = _lstat(path, what)
    if stat.S_ISLNK(info.st_mode):
        _refuse_foreign_link(path, info, what)
        info = _stat(path, what)
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafePathError(f"{what} {path} exists and is not a directory; remove it or choose another path")
    if info.st_uid != os.geteuid():
        raise UnsafePathError(
            f"{what} {path} is owned by {_user(info.st_uid)}, not by you ({_user(os.geteuid())}): another user made "
            f"it and may have read or changed what is in it; remove it (as its owner or root) or choose another "
            f"path")
    if info.st_mode & 0o077:
        raise UnsafePathError(
            f"{what} {path} has mode {_mode(info)}: group or others may reach it; run `chmod 700 {path}` "
            f"(and `chmod -R go= {path}` for what is in it), then start again")
    return path.resolve()


def check_ancestors(path: str | os.PathLike, what: str) -> None:
    """Refuses `path` when a directory above it could be replaced by another user: a symbolic link
    on the way that another user owns, or a directory owned by another user (root aside) or
    writable by others without the sticky bit."""
    path = pathlib.Path(os.path.abspath(path))
    me = os.geteuid()
    for part in reversed(path.parents):
        try:
            info = os.lstat(part)
        except FileNotFoundError:
            break
        if stat.S_ISLNK(info.st_mode):
            _refuse_foreign_link(part, info, f"{what} {path}: the path")
    # where the path really leads (a link of ours at its end included): that is what must hold
    for part in reversed(pathlib.Path(os.path.realpath(path)).parents):
        try:
            info = os.stat(part)
        except FileNotFoundError:
            break
        if info.st_uid not in (0, me):
            raise UnsafePathError(
                f"{what} {path} is inside {part}, which {_user(info.st_uid)} owns and could replace it; "
                f"choose a path under directories only you or root own")
        if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
            raise UnsafePathError(
                f"{what} {path} is inside {part} (mode {_mode(info)}), which others may write without the sticky "
                f"bit, so they could replace it; choose a path under directories only you can write (or "
                f"sticky ones such as /tmp and /dev/shm)")


def check_tree(root: str | os.PathLike, what: str, names: tuple[str, ...] | None = None) -> None:
    """Refuses when anything under directory `root` (only the entries `names` of it, when given,
    and everything below them) is owned by another user, or is a file or directory group or others
    may reach, or is a symbolic link another user owns. Links are never followed. Lists every
    problem found and the commands that fix them."""
    root = pathlib.Path(root)
    problems: list[str] = []
    foreign = loose = False
    stack = [root / n for n in names] if names is not None else _children(root)
    while stack:
        path = stack.pop()
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue  # removed meanwhile (a server's temporary file)
        if info.st_uid not in (os.geteuid(),) and not (stat.S_ISLNK(info.st_mode) and info.st_uid == 0):
            problems.append(f"{path} (owned by {_user(info.st_uid)})")
            foreign = True
        elif not stat.S_ISLNK(info.st_mode) and info.st_mode & 0o077:
            problems.append(f"{path} (mode {_mode(info)})")
            loose = True
        if stat.S_ISDIR(info.st_mode):
            stack.extend(_children(path))
    if not problems:
        return
    shown = sorted(problems)[:SHOWN]
    more = f"\n  ... and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
    fixes = []
    if loose:
        fixes.append(f"run `chmod -R go= {root}` (no group or other access under it)")
    if foreign:
        fixes.append("remove what another user owns (after checking where it came from: only you should "
                     "be able to write here)")
    raise UnsafePathError(f"{what} {root} holds files other users may reach or may have placed:\n  "
                          + "\n  ".join(shown) + more + "\n" + "; ".join(fixes) + "; then start again")


def open_private(path: str | os.PathLike, how: str = "a") -> int:
    """Opens `path` to append ("a"), to write from empty ("w"), both creating it with mode 0600, or
    to read ("r"); refuses a symbolic link and a file that is not this user's or that group or
    others may reach. Returns the descriptor."""
    flags = {"a": os.O_WRONLY | os.O_CREAT | os.O_APPEND, "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
             "r": os.O_RDONLY}[how]
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileNotFoundError:
        raise
    except OSError as e:
        raise UnsafePathError(f"cannot open {path}: {e.strerror}"
                              + (" (a symbolic link is refused there)" if e.errno == errno.ELOOP else "")) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        os.close(fd)
        raise UnsafePathError(f"{path} is not a private file of yours (owned by {_user(info.st_uid)}, mode "
                              f"{_mode(info)}); remove it, or run `chmod 600 {path}` if you made it")
    return fd


def read_private(path: str | os.PathLike) -> bytes:
    """The contents of `path`, a file of this user's that nobody else may reach (see open_private)."""
    with os.fdopen(open_private(path, "r"), "rb") as f:
        return f.read()


def _children(path: pathlib.Path) -> list[pathlib.Path]:
    try:
        return [pathlib.Path(e.path) for e in os.scandir(path)]
    except (FileNotFoundError, NotADirectoryError):
        return []


def _refuse_foreign_link(path: pathlib.Path, info: os.stat_result, what: str) -> None:
    if info.st_uid not in (0, os.geteuid()):
        raise UnsafePathError(
            f"{what} {path} is a symbolic link owned by {_user(info.st_uid)}, who could point it anywhere; "
            f"remove it (a directory is expected there) or choose another path")


def _lstat(path: pathlib.Path, what: str) -> os.stat_result:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        raise UnsafePathError(f"{what} {path} does not exist") from None


def _stat(path: pathlib.Path, what: str) -> os.stat_result:
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise UnsafePathError(f"{what} {path} is a symbolic link to nothing; remove it") from None


def _mode(info: os.stat_result) -> str:
    return f"{stat.S_IMODE(info.st_mode):04o}"


def _user(uid: int) -> str:
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"
