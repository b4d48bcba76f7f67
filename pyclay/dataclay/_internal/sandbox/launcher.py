"""The launcher a Data Service runs (outside any sandbox, as its own user, possibly root) to start an
execution environment confined:

    python -m dataclay._internal.sandbox [options] -- COMMAND [ARGS...]
    python -I <this directory> [options] -- COMMAND [ARGS...]   (the same, without importing dataclay)

It decides the mode and the profile, then replaces itself by bwrap (bwrap mode) or by the command
(kernel and none modes), so the Data Service's child is the sandbox. COMMAND keeps standard input,
output and error and nothing else: every other descriptor is closed and the environment is rebuilt
from a short list. Unless --self-confining, COMMAND runs behind the exec wrapper (exec.py), which
applies the in-process layers and then executes it. Every refusal exits with status 2 and one line
on standard error saying what to do."""
from __future__ import annotations

import os
import resource
import signal
import stat
import sys
from collections import namedtuple

from . import bwrap, credentials, landlock, limits, paths, seccomp
from .options import UID_WINDOW, Request, parse
from .profiles import ENV_PROFILE, Limits, Profile, SandboxError

EXIT_REFUSED = 2
DEFAULT_UID_BASE = 1_900_000_000
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
EXEC_WRAPPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "exec.py")
KEPT_VARIABLES = ("PATH", "LANG", "TZ", "MALLOC_ARENA_MAX")
KEPT_PREFIXES = ("LC_", "DATACLAY_EE_")
SECRET_WORDS = ("SECRET", "PASSWORD", "TOKEN", "KEY")


class Host(namedtuple("Host", "root bwrap bwrap_problem landlock_abi seccomp_problem")):
    """What this machine offers: bwrap (or why not), Landlock's ABI (0: none), seccomp (or why not)."""

    __slots__ = ()

    @staticmethod
    def detect(mode: str, environ: dict[str, str]) -> Host:
        """Looks at this machine, starting a probe sandbox only when bwrap may be chosen."""
        root = os.geteuid() == 0
        found, problem = bwrap.find(environ), None
        if mode in ("auto", "bwrap") and found:
            problem = bwrap.probe(found, root, paths.read_set(paths.system_paths()))
        elif mode in ("auto", "bwrap"):
            problem = "bwrap is not installed (Debian: bubblewrap)"
        return Host(root, found, problem, landlock.abi(), seccomp.problem())


class Plan(namedtuple("Plan", "mode argv env profile tmp_owner parent_pid")):
    """What start() does: execute `argv` with exactly `env`, after handing `tmp_owner`'s directory
    (path, uid, gid) to the slot's user, dying with `parent_pid` (the Data Service)."""

    __slots__ = ()


def choose_mode(requested: str, host: Host) -> str:
    """The mode to run in, or SandboxError saying what is missing."""
    if requested == "none":
        return "none"
    missing = [host.seccomp_problem] if host.seccomp_problem else []
    bwrap_problems = missing + ([host.bwrap_problem] if host.bwrap_problem else [])
    kernel_problems = missing + ([] if host.landlock_abi else ["this kernel has no Landlock (Linux 5.13+, "
                                                                "with landlock among the LSMs it boots with)"])
    if requested in ("auto", "bwrap") and not bwrap_problems:
        return "bwrap"
    if requested == "bwrap":
        raise SandboxError(f"bwrap mode is not available: {'; '.join(bwrap_problems)}")
    if not kernel_problems:
        return "kernel"
    if requested == "kernel":
        raise SandboxError(f"kernel mode is not available: {'; '.join(kernel_problems)}")
    problems = "; ".join(dict.fromkeys(bwrap_problems + kernel_problems))
    raise SandboxError(f"no confinement is available here: {problems}. Model code would run unconfined; if this "
                       f"cluster has a single user, say so explicitly with DATACLAY_EE_CONFINEMENT=none (--mode none)")


def plan(request: Request, host: Host, environ: dict[str, str]) -> Plan:
    """Everything start() needs, checked; SandboxError says what is wrong."""
    mode = choose_mode(request.mode, host)
    rules = paths.Rules.for_environment(environ)
    for path in request.read:
        if not os.path.isabs(path):
            raise SandboxError(f"--read {path}: give an absolute path")
        if not os.path.exists(path):
            raise SandboxError(f"--read {path}: no such file or directory")
        refusal = rules.refusal(path)
        if refusal:
            raise SandboxError(f"--read {refusal}")
    interpreter = []
    for path in [*paths.interpreter_paths(), os.path.dirname(EXEC_WRAPPER)]:
        refusal = rules.refusal(path)
        if refusal:
            print(f"sandbox: not exposing {refusal}", file=sys.stderr)
        else:
            interpreter.append(path)
    reads = paths.read_set([*paths.system_paths(), *interpreter, *request.read])
    slot_uid = _slot_uid(request, host, mode, environ)
    uid = slot_uid if mode != "none" else None
    command = [_resolve(request.command[0], environ.get("PATH") or DEFAULT_PATH), *request.command[1:]]
    inner = command if request.self_confining else [sys.executable, "-I", "-S", EXEC_WRAPPER, "--", *command]
    if mode != "none":
        for program in {inner[0], command[0]}:
            if not paths.covered(program, reads.paths):
                raise SandboxError(f"{program} is not under any path exposed to the sandbox: add --read of "
                                   f"its installation directory")
    if uid is not None:
        _check_reachable(request, mode, interpreter, command[0])
    tmp = _private_tmp(request, mode, rules, slot_uid)
    nproc_scope = "sandbox" if (mode == "bwrap" and not host.root) or uid is not None else "user"
    bounds = Limits(request.memory_mb, request.max_processes, nproc_scope, request.max_open_files,
                    request.cpu_seconds, request.tmp_mb if tmp else 0)
    too_high = limits.too_high(bounds)
    if too_high:
        raise SandboxError(f"cannot raise limits: {'; '.join(too_high)}")
    # bwrap's /dev has them all; a container's /dev may lack some
    read_devices = tuple(d for d in paths.READ_DEVICES if mode == "bwrap" or os.path.exists(d))
    write_devices = tuple(d for d in paths.WRITE_DEVICES if mode == "bwrap" or os.path.exists(d))
    if mode == "bwrap":
        profile = Profile(mode, (*reads.paths, "/proc", *read_devices), ("/tmp", *write_devices), bounds,
                          uid, uid, None, False)
    else:
        profile = Profile(mode, (*reads.paths, *read_devices), (*([tmp] if tmp else []), *write_devices), bounds,
                          uid, uid, os.getppid(), True)
    env = _environment(environ, "/tmp" if mode == "bwrap" else tmp or "/tmp", profile)
    if mode == "bwrap":
        argv = bwrap.command(host.bwrap, host.root, reads, request.tmp_mb, env, inner)
    else:
        argv = inner
    return Plan(mode, tuple(argv), env, profile, (tmp, uid, uid) if tmp and uid is not None else None, os.getppid())


def start(p: Plan) -> None:
    """Becomes the sandbox: never returns, raises SandboxError or OSError if it cannot."""
    for number in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores them; what it executes must not
        signal.signal(number, signal.SIG_DFL)
    os.umask(0o077)
    if p.mode != "bwrap":
        # own session and process group, which the Data Service kills as a whole; a new session also
        # leaves the Data Service's terminal behind (no TIOCSTI into it)
        try:
            os.setsid()
        except PermissionError:
            if os.getpgrp() != os.getpid():
                raise
    # kept across execve: bwrap (which sets its own) or the command dies with the Data Service even
    # if that dies before they start; confine() sets it again after a uid switch, which clears it
    credentials.die_with_parent(p.parent_pid)
    if p.tmp_owner:
        path, uid, gid = p.tmp_owner
        os.chown(path, uid, gid, follow_symlinks=False)
    os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[1])  # no descriptor can be numbered higher
    os.execve(p.argv[0], list(p.argv), p.env)


def main(argv: list[str] | None = None) -> int:
    """Runs the launcher; returns only on a refusal (status 2)."""
    request = parse(sys.argv[1:] if argv is None else argv)
    environ = dict(os.environ)
    try:
        start(plan(request, Host.detect(request.mode, environ), environ))
    except SandboxError as e:
        print(f"sandbox: {e}", file=sys.stderr)
    except OSError as e:
        print(f"sandbox: cannot start {request.command[0]}: {e}", file=sys.stderr)
    return EXIT_REFUSED


def _slot_uid(request: Request, host: Host, mode: str, environ: dict[str, str]) -> int | None:
    """The slot's uid as root (None for another user, who keeps its uid: bwrap maps it); none mode
    does not switch to it, but accepts a --tmp the slot's user owns from an earlier confined start."""
    if not host.root or (mode == "none" and request.uid_slot is None):
        return None
    if request.uid_slot is None:
        raise SandboxError("running as root: give --uid-slot N so that the code runs as its own unprivileged user")
    text = environ.get("DATACLAY_EE_UID_BASE") or str(DEFAULT_UID_BASE)
    if not text.isdigit() or not UID_WINDOW[0] <= int(text) <= UID_WINDOW[1]:
        raise SandboxError(f"DATACLAY_EE_UID_BASE={text}: give an integer from {UID_WINDOW[0]} to {UID_WINDOW[1]}")
    uid = int(text) + request.uid_slot
    if uid > UID_WINDOW[1]:
        raise SandboxError(f"--uid-slot {request.uid_slot}: uid {uid} is past {UID_WINDOW[1]}; lower "
                           f"DATACLAY_EE_UID_BASE or the slot")
    for table in ("/etc/passwd", "/etc/group"):
        try:
            with open(table) as f:
                taken = {line.split(":")[2]: line.split(":")[0] for line in f if line.count(":") >= 3}
        except OSError:
            continue
        if str(uid) in taken:
            raise SandboxError(f"--uid-slot {request.uid_slot}: id {uid} belongs to '{taken[str(uid)]}' in {table}; "
                               f"choose a DATACLAY_EE_UID_BASE nobody uses")
    return uid


def _check_reachable(request: Request, mode: str, interpreter: list[str], program: str) -> None:
    """The slot's user owns nothing and is in no group: what it runs and reads must be open to others.
    A self-confining command that is this interpreter keeps importing from its installation after the
    switch. In bwrap mode the directories above each bind are the sandbox's own: only the path counts."""
    needed = [*request.read, program]
    if request.self_confining and os.path.realpath(program) == os.path.realpath(sys.executable):
        needed += interpreter
    for path in needed:
        where = paths.unreachable_by_others(path) if mode == "kernel" else _unreadable_itself(path)
        if where:
            raise SandboxError(f"the slot's user cannot reach {path}: {where} is closed to other users. Install "
                               f"it where every user may read it" + (", or use bwrap mode" if mode == "kernel" else ""))


def _unreadable_itself(path: str) -> str | None:
    real = os.path.realpath(path)
    mode = os.stat(real).st_mode
    return None if mode & 0o004 else f"{real} (mode {mode & 0o7777:o})"


def _private_tmp(request: Request, mode: str, rules: paths.Rules, slot_uid: int | None) -> str | None:
    if mode == "bwrap":
        return None
    if request.tmp is None:
        if mode == "kernel":
            raise SandboxError("kernel mode needs --tmp DIR: a directory of the caller's, mode 0700, to be the "
                               "only place the code may write")
        return None
    tmp = request.tmp
    if not os.path.isabs(tmp) or os.path.normpath(tmp) != tmp:
        raise SandboxError(f"--tmp {tmp}: give an absolute, normalised path")
    try:
        st = os.lstat(tmp)
    except OSError as e:
        raise SandboxError(f"--tmp {tmp}: {e.strerror}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise SandboxError(f"--tmp {tmp}: not a directory (symlinks are refused)")
    owners = {os.geteuid(), slot_uid}  # the slot's user owns it after its first confined start
    if st.st_uid not in owners or st.st_mode & 0o077:
        raise SandboxError(f"--tmp {tmp}: must belong to uid {os.geteuid()} with mode 0700 (it is uid "
                           f"{st.st_uid}, mode {st.st_mode & 0o7777:o})")
    refusal = rules.tmp_refusal(tmp)
    if refusal:
        raise SandboxError(f"--tmp {refusal}")
    return tmp


def _resolve(program: str, search: str) -> str:
    if "/" in program:
        resolved = os.path.abspath(program)
    else:
        resolved = next((os.path.join(d, program) for d in search.split(":")
                         if d and os.access(os.path.join(d, program), os.X_OK)), program)
    if not os.path.isabs(resolved) or not os.access(resolved, os.X_OK):
        raise SandboxError(f"{program}: no such executable (PATH={search})")
    return resolved


def _environment(environ: dict[str, str], home: str, profile: Profile) -> dict[str, str]:
    env = {k: v for k, v in environ.items() if k in KEPT_VARIABLES or k.startswith(KEPT_PREFIXES)}
    for key in [k for k in env if any(word in k for word in SECRET_WORDS)]:
        # the execution environment's settings hold no secret; one named like a secret is a mistake
        print(f"sandbox: not passing {key}: confined code must get no secret", file=sys.stderr)
        del env[key]
    env.setdefault("PATH", DEFAULT_PATH)
    env.update({"HOME": home, "TMPDIR": home, ENV_PROFILE: profile.to_json()})
    return env
