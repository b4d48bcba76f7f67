"""bubblewrap (Debian: bubblewrap), the namespaces and file-system view of bwrap mode: new user
(unless root), pid, network, IPC, UTS and cgroup namespaces; a root of its own holding only read-only
binds of what the interpreter needs, a new /proc, a minimal /dev and a private, bounded /tmp.

As root bwrap runs in its privileged mode (no user namespace), so the slot's uid that confine()
switches to is a real, unprivileged uid outside too; it keeps CAP_SETUID and CAP_SETGID for that
switch, and CAP_SETPCAP to empty the bounding set, and nothing else. As another user it maps that
user into a new user namespace and keeps no capability at all."""
from __future__ import annotations

import os

from .paths import ReadSet

MB = 1 << 20
ROOT_KEEPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")


def find(environ: dict[str, str]) -> str | None:
    """The system's bwrap (/usr/bin, /bin), else the first on PATH; only one that its owner (root or
    this user) alone may change, since it may run as root. None when there is none."""
    for directory in ["/usr/bin", "/bin", *environ.get("PATH", "").split(":")]:
        candidate = os.path.join(directory, "bwrap")
        try:
            st = os.stat(candidate)
        except OSError:
            continue
        if os.path.isabs(candidate) and os.access(candidate, os.X_OK) and st.st_uid in (0, os.geteuid()) \
                and not st.st_mode & 0o022:
            return candidate
    return None


def namespaces(root: bool) -> list[str]:
    """The namespace and life-cycle options, the same for the probe and the real thing."""
    user = [] if root else ["--unshare-user", "--disable-userns"]
    caps = ["--cap-drop", "ALL", *[a for cap in ROOT_KEEPS for a in ("--cap-add", cap)]] if root else []
    return [*user, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", *caps]


def probe(bwrap: str, root: bool, system: ReadSet) -> str | None:
    """None when a sandbox like the real one, showing only `system`, starts on this machine; else what
    bwrap said (user namespaces may be disabled, or this bwrap too old for an option)."""
    argv = command(bwrap, root, system, 1, {}, [os.path.realpath("/usr/bin/true")])
    read, write = os.pipe()
    try:
        pid = os.posix_spawn(bwrap, argv, {}, file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, write, 1),
            (os.POSIX_SPAWN_DUP2, write, 2)])
    except OSError as e:
        os.close(read)
        os.close(write)
        return f"{bwrap} cannot run: {e}"
    os.close(write)
    with os.fdopen(read, "rb") as f:
        said = f.read(4096).decode(errors="replace").strip()
    status = os.waitpid(pid, 0)[1]
    if os.waitstatus_to_exitcode(status) == 0:
        return None
    return f"bwrap fails here: {said or 'exit status ' + str(os.waitstatus_to_exitcode(status))}"


def command(bwrap: str, root: bool, reads: ReadSet, tmp_mb: int, env: dict[str, str], inner: list[str]) -> list[str]:
    """The bwrap command line that runs `inner` with environment `env` and nothing else."""
    argv = [bwrap, *namespaces(root), "--hostname", "sandbox", "--proc", "/proc", "--dev", "/dev",
            "--perms", "1777", "--size", str(tmp_mb * MB), "--tmpfs", "/tmp"]
    made = {"/", "/tmp"}
    for path in reads.paths:
        # bwrap would make the directories above a bind 0700, closed to a slot's user: make them 0755
        for parent in _parents(path):
            if parent not in made:
                made.add(parent)
                argv += ["--perms", "0755", "--dir", parent]
        argv += ["--ro-bind", path, path]
    for target, link in reads.symlinks:
        argv += ["--symlink", target, link]
    argv += ["--chdir", "/tmp", "--clearenv"]
    for key, value in sorted(env.items()):
        argv += ["--setenv", key, value]
    return [*argv, "--", *inner]


def _parents(path: str) -> list[str]:
    """The directories above `path`, outermost first ("/" excluded)."""
    parts = path.strip("/").split("/")[:-1]
    return ["/" + "/".join(parts[:i + 1]) for i in range(len(parts))]
