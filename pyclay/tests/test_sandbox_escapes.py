"""Real sandboxes, attacked: hostile code started through the launcher in each mode this machine
offers (bwrap, kernel) tries to read the cluster's secrets, the pools and its parent's memory, to
signal and trace its parent, to reach the network, to fork without end and to outlive its parent; every
attempt must fail the way the mode says. Run by the caller of the tests, and (when that is root)
also as an unprivileged user (uid 65534, through setpriv) with the system's Python, as a Data Service
of a non-root deployment would. sandbox/host.py plays the Data Service, sandbox/hostile.py the model
code. Startup times are printed (pytest -rP shows them)."""
import json
import os
import pathlib
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile

import pytest

from dataclay._internal.sandbox import Limits, Profile, landlock, launcher
from dataclay._internal import processes

HERE = pathlib.Path(__file__).resolve().parent
HOST, HOSTILE = str(HERE / "sandbox" / "host.py"), str(HERE / "sandbox" / "hostile.py")
SANDBOX_DIR = os.path.dirname(launcher.__file__)
SYSTEM_PYTHON = "/usr/bin/python3"


def _version(python):
    """(major, minor) of `python`, or None."""
    if not os.path.exists(python):
        return None
    said = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True, text=True)
    return tuple(int(n) for n in said.stdout.split()) or None


SYSTEM_VERSION = _version(SYSTEM_PYTHON)
VENV_PACKAGES = next((p for p in sys.path if p.endswith("site-packages")), "")
PYCLAY_DIR = str(pathlib.Path(launcher.__file__).resolve().parents[3])
NOBODY = 65534
ROOT = os.geteuid() == 0
MAX_PROCESSES, MEMORY_MB = 32, 256
JAVA_HOME = os.environ.get("JAVA_HOME") or (os.path.dirname(os.path.dirname(os.path.realpath(shutil.which("java"))))
                                            if shutil.which("java") else None)

# what each escape ends in, per mode: bwrap hides what it does not bind (ENOENT) and the host's pids
# (ESRCH); kernel mode sees the same file system, and Landlock refuses it (EACCES)
HIDDEN = {"bwrap": "ENOENT", "kernel": "EACCES"}
EXPECTED = {
    "read host environ": HIDDEN, "read host mem": HIDDEN, "write outside tmp": HIDDEN,
    "list /proc": {"bwrap": "host-hidden", "kernel": "EACCES"},
    "SIGKILL parent": "EPERM", "SIGSTOP parent": "EPERM",
    "SIGKILL host": {"bwrap": "ESRCH", "kernel": "EPERM"}, "SIGSTOP host": {"bwrap": "ESRCH", "kernel": "EPERM"},
    "ptrace parent": "EPERM", "ptrace host": "EPERM",
    "tcp connect": "EPERM", "udp send": "EPERM", "unix connect": "EPERM",
    "unix datagram": {"bwrap": "ENOENT", "kernel": "EPERM"},  # sendto() with a path: bwrap shows none
    "unshare user": "EPERM",
    "setsid": {"bwrap": "ok", "kernel": "EPERM"},  # a pid namespace holds it anyway; else it stays in the group
    "memory": "MemoryError",
    "write tmp": "ok",
}


class Identity:
    """Who runs the stand-in Data Service: the tests' own user, or an unprivileged one."""

    def __init__(self, name, uid):
        self.name, self.uid = name, uid

    def prefix(self):
        return [] if self.uid == os.geteuid() else ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}",
                                                     "--clear-groups"]

    def python(self, mode):
        """The interpreter the launcher and the confined code run under."""
        if self.uid != os.geteuid():
            return SYSTEM_PYTHON  # the tests' interpreter may live under a 0700 home (here /root/.pyenv)
        if ROOT and mode == "kernel" and launcher.paths.unreachable_by_others(sys.executable):
            return SYSTEM_PYTHON  # kernel mode has no mount namespace: the slot's user must reach it as installed
        return sys.executable

    def __repr__(self):
        return self.name


IDENTITIES = [Identity("caller", os.geteuid())]
if ROOT and shutil.which("setpriv") and os.path.exists(SYSTEM_PYTHON):
    IDENTITIES.append(Identity("unprivileged", NOBODY))


@pytest.fixture
def work():
    """A directory every user may pass, holding a fake cluster home with its secret, and the host's
    sockets; plus a file under /dev/shm and one in the caller's home."""
    base = pathlib.Path(tempfile.mkdtemp(prefix="sandbox-escapes-"))
    base.chmod(0o755)
    shm = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-sandbox-test-", dir="/dev/shm"))
    home_file = pathlib.Path(os.path.expanduser("~")) / f".dataclay-sandbox-test-{secrets.token_hex(4)}"
    try:
        yield base, shm, home_file
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)
        home_file.unlink(missing_ok=True)


def prepare(work, identity):
    """The fake cluster home (0700, with a 0600 cluster.secret), a pool file and a file in /tmp (both
    readable by anyone: only the sandbox may stop them), and the private tmp of kernel mode; all
    belonging to `identity`, as they would to its Data Service."""
    base, shm, home_file = work
    cluster, tmp = base / "cluster", base / "ee-tmp"
    cluster.mkdir(mode=0o700)
    tmp.mkdir(mode=0o700)
    (cluster / "cluster.secret").write_text("the cluster secret")
    (cluster / "cluster.secret").chmod(0o600)
    (shm / "pool").write_text("another account's objects")
    (shm / "pool").chmod(0o644)
    (base / "host-tmp-file").write_text("host /tmp")
    (base / "host-tmp-file").chmod(0o644)
    home_file.write_text("the Data Service's home")
    for path in (base, cluster, tmp, cluster / "cluster.secret", shm, shm / "pool"):
        os.chown(path, identity.uid, identity.uid)
    return {"cluster": str(cluster), "tmp": str(tmp), "secrets": {
        "cluster.secret": str(cluster / "cluster.secret"), "pool under /dev/shm": str(shm / "pool"),
        "file under /tmp": str(base / "host-tmp-file"), "file in the home": str(home_file)}}


def options(mode, places, slot):
    return ["--mode", mode, "--uid-slot", str(slot), "--tmp", places["tmp"], "--read", HOSTILE,
            "--max-processes", str(MAX_PROCESSES), "--memory-mb", str(MEMORY_MB)]


def host(identity, config, timeout=40):
    """Runs sandbox/host.py as `identity` and returns its report."""
    python = identity.python(config["mode"])
    config = {"launcher": [python, "-I", SANDBOX_DIR], "bwrap": config["mode"] == "bwrap", **config}
    run = subprocess.run([*identity.prefix(), python, HOST, json.dumps(config)], capture_output=True, text=True,
                         timeout=timeout)
    assert run.returncode == 0 and run.stdout, f"the host failed ({run.returncode}): {run.stderr}"
    return json.loads(run.stdout)


def require(identity, mode, work):
    """Skips when `mode` is not available to `identity` here; fails on any other refusal."""
    python = identity.python(mode)
    tmp = tempfile.mkdtemp(dir=work[0])
    os.chown(tmp, identity.uid, identity.uid)
    run = subprocess.run([*identity.prefix(), python, "-I", SANDBOX_DIR, "--mode", mode, "--uid-slot", "0",
                          "--tmp", tmp, "--", "/bin/true"], capture_output=True, text=True, timeout=30)
    if run.returncode == 2 and "is not available" in run.stderr:
        pytest.skip(run.stderr.strip())
    assert run.returncode == 0, run.stderr


def slot(identity, mode):
    """A uid slot of its own for each test, so that concurrent sandboxes never share a process bound."""
    return 40 + [i.name for i in IDENTITIES].index(identity.name) * 10 + ("bwrap", "kernel").index(mode)


@pytest.mark.parametrize("mode", ["bwrap", "kernel"])
@pytest.mark.parametrize("identity", IDENTITIES, ids=repr)
def test_hostile_code_is_refused_everything_and_leaves_nothing_behind(identity, mode, work):
    # setup
    require(identity, mode, work)
    places = prepare(work, identity)
    marker = f"3600.{secrets.randbelow(10**6):06d}"
    python = identity.python(mode)
    # run
    report = host(identity, {
        "mode": mode, "action": "escape", "work": str(work[0]), "marker": marker,
        "options": options(mode, places, slot(identity, mode)), "command": [python, HOSTILE],
        "env": {"DATACLAY_HOME": places["cluster"]},
        "targets": {"secrets": places["secrets"], "outside": os.path.join(places["cluster"], "planted"),
                    "max_processes": MAX_PROCESSES, "memory_mb": MEMORY_MB}})
    # verify
    outcomes = report["outcomes"]
    assert outcomes is not None, f"the confined process said nothing: {report['stderr']}"
    for name in places["secrets"]:
        assert outcomes[f"read {name}"] == HIDDEN[mode], name
    for name, expected in EXPECTED.items():
        assert outcomes[name] == (expected[mode] if isinstance(expected, dict) else expected), name
    assert outcomes["fork bomb"].startswith("EAGAIN after ")
    assert int(outcomes["fork bomb"].split()[-1]) <= MAX_PROCESSES
    assert report["reached"] == []  # nothing arrived on the host's TCP, UDP and UNIX sockets
    assert not os.path.exists(os.path.join(places["cluster"], "planted"))
    if ROOT and identity.uid == 0:
        assert outcomes["uid"] == launcher.DEFAULT_UID_BASE + slot(identity, mode)
        assert outcomes["setuid 0"] == "EPERM"
    else:
        assert outcomes["uid"] == identity.uid
        assert outcomes["setuid 0"] in ("EPERM", "EINVAL")  # EINVAL: uid 0 is not even mapped in bwrap's namespace
    # the grandchild that called setsid was there, and went with the sandbox when the host killed it
    # as a Data Service does (bwrap's pid, or the process group outside bwrap)
    assert report["leftovers_before"], "the grandchild never started"
    assert report["leftovers"] == [] and report["output_closed"]


@pytest.mark.parametrize("mode", ["bwrap", "kernel"])
def test_a_sandbox_does_not_outlive_a_killed_data_service(mode, work):
    # setup
    identity = IDENTITIES[0]
    require(identity, mode, work)
    places = prepare(work, identity)
    marker = f"3600.{secrets.randbelow(10**6):06d}"
    python = identity.python(mode)
    config = {"launcher": [python, "-I", SANDBOX_DIR], "bwrap": mode == "bwrap", "mode": mode, "action": "orphan",
              "work": str(work[0]), "marker": marker, "options": options(mode, places, slot(identity, mode)),
              "command": [python, HOSTILE], "env": {"DATACLAY_HOME": places["cluster"]},
              "targets": {"secrets": {}, "outside": "/nonexistent", "max_processes": MAX_PROCESSES,
                          "memory_mb": MEMORY_MB}}
    ds = subprocess.Popen([python, HOST, json.dumps(config)], stdout=subprocess.PIPE, text=True)
    grandchildren = []
    try:
        report = json.loads(ds.stdout.readline())
        sandbox, grandchildren = report["pid"], report["leftovers_before"]
        assert grandchildren, "the grandchild never started"
        # run: the Data Service dies without a chance to clean up
        ds.kill()
        ds.wait()
        # verify
        assert processes.await_exit([sandbox], timeout=5), "the sandbox outlived its Data Service"
        if mode == "bwrap":
            assert processes.await_exit(grandchildren, timeout=5), "a grandchild outlived the pid namespace"
        else:
            # The residual risk of kernel mode (docs/internals.md): the parent-death signal reaches the
            # sandbox's own process, not a grandchild. setsid was refused, so it is still in the group the
            # restarted Data Service can kill.
            assert all(os.getpgid(pid) == sandbox for pid in grandchildren if processes.runs(pid))
    finally:
        ds.kill()
        ds.wait()
        for pid in grandchildren:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.mark.parametrize("self_confining", [False, True], ids=["exec-wrapper", "self-confining"])
@pytest.mark.parametrize("mode", ["bwrap", "kernel"])
@pytest.mark.parametrize("identity", IDENTITIES, ids=repr)
def test_confined_python_imports_talks_over_its_pipes_and_writes_its_tmp(identity, mode, self_confining, work):
    # setup
    require(identity, mode, work)
    places = prepare(work, identity)
    python = identity.python(mode)
    venv = python == sys.executable  # the tests' own interpreter: pyclay and grpc are importable
    # the system's Python borrows the virtualenv's packages when it is the same version and they are
    # open to every user: what a Data Service would expose with --read
    borrowed = [VENV_PACKAGES, PYCLAY_DIR]
    if venv or not VENV_PACKAGES or SYSTEM_VERSION != sys.version_info[:2] \
            or any(launcher.paths.unreachable_by_others(p) for p in borrowed):
        borrowed = []
    confining = ("from dataclay._internal.sandbox import confine_from_environment as c; applied = c()" if venv else
                 f"sys.path.insert(0, {SANDBOX_DIR!r}); import _standalone; "
                 f"applied = _standalone.load().confine_from_environment()")
    code = "; ".join([
        "import os, sys",
        confining if self_confining else "applied = os.environ['DATACLAY_SANDBOX_APPLIED']",
        "line = sys.stdin.readline()",
        "print('ready', flush=True)",
        f"sys.path[:0] = {borrowed!r}",
        "import dataclay" if venv or borrowed else "import json",
        "path = os.path.join(os.environ['TMPDIR'], 'scratch')",
        "open(path, 'w').write(line.upper())",
        "print(open(path).read().strip(), applied, os.getuid())"])
    extra = ["--self-confining"] if self_confining else []
    extra += [a for path in borrowed for a in ("--read", path)]
    # run
    report = host(identity, {"mode": mode, "action": "run", "stdin": "hello over the pipe\n",
                             "options": [*options(mode, places, slot(identity, mode)), *extra],
                             "command": [python, "-c", code], "env": {"DATACLAY_HOME": places["cluster"]}})
    # verify
    assert report["status"] == 0, report["stderr"]
    ready, answer = report["stdout"].splitlines()
    words = answer.split()
    assert ready == "ready" and " ".join(words[:4]) == "HELLO OVER THE PIPE"
    assert words[4].startswith(f"{mode},") and "seccomp" in words[4] and "rlimits" in words[4]
    assert f"landlock-abi{landlock.abi()}" in words[4]
    print(f"startup {identity.name} {mode} {'self-confining' if self_confining else 'exec-wrapper'} "
          f"({'venv' if venv else 'system'} python{', imports dataclay' if venv or borrowed else ''}): "
          f"{report['startup_ms']} ms to ready")


@pytest.mark.parametrize("mode", ["bwrap", "kernel"])
@pytest.mark.parametrize("identity", IDENTITIES, ids=repr)
def test_a_jvm_runs_confined_behind_the_exec_wrapper(identity, mode, work):
    # setup
    if not JAVA_HOME or not os.path.exists(os.path.join(JAVA_HOME, "bin", "java")):
        pytest.skip("no JDK here")
    require(identity, mode, work)
    places = prepare(work, identity)
    opts = options(mode, places, slot(identity, mode))
    opts[opts.index("--memory-mb") + 1] = "1024"
    # run: a JVM reserves much more address space than it uses; under RLIMIT_AS its reservations and
    # glibc's per-thread malloc arenas (64 MB each) must be made smaller
    report = host(identity, {"mode": mode, "action": "run", "options": [*opts, "--read", JAVA_HOME],
                             "command": [os.path.join(JAVA_HOME, "bin", "java"), "-Xmx128m", "-XX:-UsePerfData",
                                         "-XX:CompressedClassSpaceSize=64m", "-XX:ReservedCodeCacheSize=32m",
                                         "-version"],
                             "env": {"DATACLAY_HOME": places["cluster"], "MALLOC_ARENA_MAX": "2"}})
    # verify
    assert report["status"] == 0, report["stderr"]
    assert "version" in report["stderr"]
    print(f"startup {identity.name} {mode} java -version: {report['startup_ms']} ms to exit")


def test_none_mode_keeps_only_the_group_and_the_limits_and_confines_nothing(work):
    # setup
    identity = IDENTITIES[0]
    places = prepare(work, identity)
    code = "\n".join([
        "import os, errno", "applied = os.environ['DATACLAY_SANDBOX_APPLIED']",
        "own_group = os.getpgrp() == os.getpid()",
        "setsid = 'ok'",
        "try: os.setsid()\nexcept OSError as e: setsid = errno.errorcode[e.errno]",
        f"secret = open({places['secrets']['cluster.secret']!r}).read()",
        "print(applied, own_group, setsid, secret == 'the cluster secret')"])
    # run
    report = host(identity, {"mode": "none", "action": "run",
                             "options": ["--mode", "none", "--uid-slot", "5", "--max-processes", "64"],
                             "command": [sys.executable, "-c", code], "env": {"DATACLAY_HOME": places["cluster"]}})
    # verify: its own process group, which it cannot leave; and unconfined, as documented
    assert report["status"] == 0, report["stderr"]
    assert report["stdout"].split() == ["none,seccomp,rlimits", "True", "EPERM", "True"]


def test_the_module_form_of_the_launcher_works_and_costs_the_dataclay_import(work):
    # setup
    identity = IDENTITIES[0]
    require(identity, "bwrap", work)
    places = prepare(work, identity)
    # run
    applied = "import os; print(os.environ['DATACLAY_SANDBOX_APPLIED'])"
    report = host(identity, {"mode": "bwrap", "action": "run", "options": ["--uid-slot", "7", "--mode", "bwrap"],
                             "command": [sys.executable, "-c", applied],
                             "launcher": [sys.executable, "-m", "dataclay._internal.sandbox"],
                             "env": {"DATACLAY_HOME": places["cluster"]}})
    # verify
    assert report["status"] == 0, report["stderr"]
    assert report["stdout"].startswith("bwrap,")
    print(f"startup caller bwrap exec-wrapper via python -m: {report['startup_ms']} ms to ready")


def test_kernel_mode_refuses_an_interpreter_the_slot_user_cannot_reach(work):
    # setup
    if not ROOT or not launcher.paths.unreachable_by_others(sys.executable):
        pytest.skip("only as root, with an interpreter closed to other users")
    places = prepare(work, IDENTITIES[0])
    # run
    run = subprocess.run([sys.executable, "-I", SANDBOX_DIR, "--mode", "kernel", "--uid-slot", "1", "--tmp",
                          places["tmp"], "--self-confining", "--", sys.executable, "-c", "pass"],
                         capture_output=True, text=True, timeout=30)
    # verify
    assert run.returncode == 2
    assert "the slot's user cannot reach" in run.stderr and "use bwrap mode" in run.stderr


def confined_child(profile, attempts, before=""):
    """Runs a fresh interpreter (not a fork of this one: grpc's fork handlers start threads in a
    child) that runs `before`, confines itself as `profile` and then each attempt (Python source);
    returns the description of what was applied and what each attempt ended in."""
    code = "\n".join([
        "import errno, json, os, sys",
        f"sys.path.insert(0, {SANDBOX_DIR!r})",
        "import _standalone",
        "confinement = _standalone.load('confinement')",
        "result = {}",
        before,
        "try:",
        f"    result['applied'] = confinement.confine(confinement.Profile.from_json({profile.to_json()!r}))",
        "except Exception as e:",
        "    result['error'] = f'{type(e).__name__}: {e}'",
        f"for name, attempt in {attempts!r}.items():",
        "    try:",
        "        exec(attempt)",
        "        result[name] = 'ok'",
        "    except OSError as e:",
        "        result[name] = errno.errorcode[e.errno]",
        "print(json.dumps(result))"])
    run = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_without_landlocks_signal_scope_seccomp_keeps_signals_to_the_process_itself():
    # setup: the kernel here has ABI 6 or later; the child acts as if it had ABI 5
    if landlock.abi() < 6:
        pytest.skip("needs Landlock ABI 6 or later to pretend to be 5")
    uid = launcher.DEFAULT_UID_BASE + 90 if ROOT else None
    profile = Profile("bwrap", ("/usr",), (), Limits(), uid, uid)
    # run
    result = confined_child(profile, {"signal the parent": "os.kill(os.getppid(), 0)",
                                      "signal itself": "os.kill(os.getpid(), 0)"},
                            before="confinement.landlock.abi = lambda: 5")
    # verify
    as_uid = f"uid={uid}," if uid else ""
    assert result.get("applied") == f"bwrap,{as_uid}caps=0,landlock-abi5,seccomp+signals,rlimits", result
    assert result["signal the parent"] == "EPERM" and result["signal itself"] == "ok"


def test_confine_refuses_a_process_that_already_runs_threads():
    # setup
    uid = launcher.DEFAULT_UID_BASE + 91 if ROOT else None
    profile = Profile("kernel", ("/usr",), (), Limits(), uid, uid)
    # run
    result = confined_child(profile, {}, before="import threading, time; "
                                                "threading.Thread(target=time.sleep, args=(5,), daemon=True).start()")
    # verify
    assert result == {"error": "SandboxError: confine() must run before any thread starts; this process has 2"}
