"""The in-process layers: what a process started by the launcher applies to itself before it runs
anything it was not shipped with. `confine()` is all or nothing: it raises SandboxError (and the
caller must exit) rather than run half-confined."""
from __future__ import annotations

import os

from . import credentials, landlock, limits, seccomp
from .profiles import ENV_PROFILE, Profile, SandboxError


def confine_from_environment() -> str:
    """Applies the profile the launcher put in DATACLAY_SANDBOX; returns what was applied."""
    text = os.environ.get(ENV_PROFILE)
    if not text:
        raise SandboxError(f"{ENV_PROFILE} is not set: start this process through `python -m "
                           f"dataclay._internal.sandbox`")
    return confine(Profile.from_json(text))


def confine(profile: Profile) -> str:
    """Confines this process (and everything it starts) as `profile` says, for good; returns a
    one-line description of what was applied, e.g. "bwrap,uid=1900000003,caps=0,landlock-abi7,seccomp,rlimits".
    Raises SandboxError when any layer cannot be applied: the caller must then exit, not go on.

    Call it first thing, while the process has one thread: Landlock binds only the calling thread,
    and a thread started before would stay free."""
    try:
        return _apply(profile)
    except OSError as e:
        raise SandboxError(f"cannot confine this process: {e}") from e


def _apply(profile: Profile) -> str:
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:
        raise SandboxError(f"confine() must run before any thread starts; this process has {threads}")
    if profile.mode != "none" and profile.uid is None and os.geteuid() == 0:
        raise SandboxError("refusing to confine code that would run as root: the launcher gives a uid slot")
    applied = [profile.mode]
    problem = seccomp.problem()
    if problem and profile.mode != "none":
        raise SandboxError(problem)
    lib = None if problem else seccomp.library()
    version = landlock.abi() if profile.mode != "none" else 0
    if profile.mode == "kernel" and version == 0:
        raise SandboxError("kernel mode needs Landlock, which this kernel does not offer")
    user_tasks = limits.tasks_of_user(os.getuid()) \
        if profile.limits.max_processes and profile.limits.nproc_scope == "user" else 0

    # The order is what makes it hold:
    # 1. Landlock's rules are built first, while every path can still be opened (a root launcher's
    #    paths may be unreachable for the slot's uid); they take effect only at step 6.
    ruleset = _ruleset(version, profile) if version else None
    if profile.mode != "none":
        # 2. The bounding and ambient sets go while CAP_SETPCAP may still be held (bwrap as root
        #    keeps it for this); the uid switch below takes it away.
        credentials.drop_bounding_and_ambient()
        # 3. The uid switch needs CAP_SETUID/CAP_SETGID and, from root to the slot's uid, empties the
        #    permitted and effective sets; what is left is dropped right after.
        if profile.uid is not None:
            credentials.switch_user(profile.uid, profile.gid)
            applied.append(f"uid={profile.uid}")
        credentials.drop_capabilities()
        applied.append("caps=0")
    # 4. A credential change clears the parent-death signal and dumpability: set them after it.
    credentials.die_with_parent(profile.parent_pid)
    if profile.mode != "none":
        credentials.make_undumpable()
    # 5. no_new_privs: Landlock and seccomp refuse an unprivileged process without it.
    credentials.set_no_new_privs()
    # 6. Landlock, now that the final credentials are in place.
    if ruleset is not None:
        ruleset.restrict()
        applied.append(f"landlock-abi{version}")
    # 7. seccomp last: it refuses prctl(PR_SET_PDEATHSIG), setsid and the like, which the steps
    #    above use, and its signal rule names this process's final pid.
    if lib is not None:
        scoped = bool(landlock.scopes(version) & landlock.SCOPE_SIGNAL)
        seccomp.build(lib, profile.mode, os.getpid(), scoped, version >= 3).load()
        applied.append("seccomp" if scoped or profile.mode == "none" else "seccomp+signals")
    # 8. Limits at the end, so that setting up is not starved by them (lowering needs no privilege).
    limits.apply(profile.limits, user_tasks)
    applied.append("rlimits")
    return ",".join(applied)


def _ruleset(version: int, profile: Profile) -> landlock.Ruleset:
    ruleset = landlock.Ruleset(version)
    for path in profile.read:
        ruleset.allow(path, landlock.READ_RIGHTS)
    for path in profile.write:
        ruleset.allow(path, landlock.WRITE_RIGHTS)
    return ruleset
