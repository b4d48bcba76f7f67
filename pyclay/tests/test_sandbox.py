"""The sandbox's decisions, without starting one: the profile and its checks, the Landlock rights of
each ABI, the bwrap command line, the choice of mode, the paths exposed and the launcher's refusals.
test_sandbox_escapes.py starts real sandboxes and attacks them."""
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile

import pytest

from dataclay._internal.sandbox import Limits, Profile, SandboxError, bwrap, landlock, launcher, limits, paths
from dataclay._internal.sandbox.paths import ReadSet, Rules

SANDBOX_DIR = os.path.dirname(launcher.__file__)
OK_HOST = launcher.Host(root=False, bwrap="/usr/bin/bwrap", bwrap_problem=None, landlock_abi=7, seccomp_problem=None)


def request(*options, command=("/usr/bin/true",)):
    return launcher.parse([*options, "--", *command])


# profile


def test_a_profile_survives_its_json_unchanged():
    profile = Profile("kernel", ("/usr", "/opt/jdk"), ("/var/lib/ee/tmp",), Limits(512, 64, "user", 256, 30, 100),
                      1900000003, 1900000003, 4242, True)
    assert Profile.from_json(profile.to_json()) == profile
    assert json.loads(profile.to_json())["limits"]["max_processes"] == 64


@pytest.mark.parametrize("change, complaint", [
    ({"mode": "chroot"}, "mode must be one of"),
    ({"read": ["usr"]}, "absolute and normalised"),
    ({"write": ["/tmp/../etc"]}, "absolute and normalised"),
    ({"read": "/usr"}, "must be a list"),
    ({"uid": 1900000003}, "together"),
    ({"uid": 0, "gid": 0}, "uid must be an integer from 1"),
    ({"uid": True, "gid": 5}, "uid must be an integer"),
    ({"parent_pid": -1}, "parent_pid must be a positive"),
    ({"keep_in_group": "yes"}, "keep_in_group"),
    ({"limits": {"memory_mb": 8}}, "memory_mb must be 0 (none) or an integer from 16"),
    ({"limits": {"max_processes": -1}}, "max_processes"),
    ({"limits": {"open_files": 2.5}}, "open_files"),
    ({"limits": {"nproc_scope": "world"}}, "nproc_scope"),
    ({"limits": {"stack_mb": 8}}, "unknown or missing field"),
    ({"sneaky": 1}, "unknown or missing field"),
    ({"format": 2}, "not a format-1 sandbox profile"),
])
def test_a_bad_profile_is_refused_naming_what_is_wrong(change, complaint):
    data = json.loads(Profile("bwrap", ("/usr",), ("/tmp",)).to_json())
    data.update(change)
    with pytest.raises(SandboxError, match=complaint.replace("(", r"\(").replace(")", r"\)")):
        Profile.from_json(json.dumps(data))


def test_a_profile_that_is_not_json_is_refused():
    with pytest.raises(SandboxError, match="not valid JSON"):
        Profile.from_json("{mode: bwrap")


# Landlock rights per ABI


def test_each_landlock_abi_handles_only_the_rights_it_knows():
    assert landlock.handled_fs(1) == (1 << 13) - 1
    assert landlock.handled_fs(2) == landlock.handled_fs(1) | landlock.REFER
    assert landlock.handled_fs(3) == landlock.handled_fs(2) | landlock.TRUNCATE
    assert landlock.handled_fs(4) == landlock.handled_fs(3)
    assert landlock.handled_fs(5) == landlock.handled_fs(4) | landlock.IOCTL_DEV
    assert landlock.handled_fs(7) == landlock.handled_fs(5)
    assert [landlock.handled_net(v) for v in (1, 3, 4, 7)] == [0, 0, 3, 3]
    assert [landlock.scopes(v) for v in (1, 5, 6, 7)] == [0, 0, 3, 3]


def test_granted_rights_are_cut_to_the_abi_and_to_what_a_file_may_hold():
    assert landlock.granted(1, landlock.WRITE_RIGHTS, is_dir=True) & (landlock.REFER | landlock.TRUNCATE) == 0
    assert landlock.granted(3, landlock.WRITE_RIGHTS, is_dir=True) & landlock.TRUNCATE
    assert landlock.granted(7, landlock.READ_RIGHTS, is_dir=False) == landlock.EXECUTE | landlock.READ_FILE
    device = landlock.granted(7, landlock.WRITE_RIGHTS, is_dir=False)
    assert device == landlock.READ_FILE | landlock.WRITE_FILE | landlock.TRUNCATE
    # nothing written in the private tmp may be executed, and no device node made there
    assert not landlock.WRITE_RIGHTS & (landlock.EXECUTE | landlock.MAKE_CHAR | landlock.MAKE_BLOCK)


def test_this_kernel_reports_a_landlock_abi():
    version = landlock.abi()
    if version == 0:
        pytest.skip("this kernel has no Landlock")
    assert 1 <= version < 100


# bwrap's command line


def test_bwrap_as_another_user_maps_it_into_a_user_namespace_and_keeps_no_capability():
    reads = ReadSet(("/root/.pyenv/versions/3.11.7", "/usr"), (("usr/lib", "/lib"),))
    argv = bwrap.command("/usr/bin/bwrap", False, reads, 64, {"HOME": "/tmp", "A": "b"}, ["/usr/bin/python3", "-V"])
    assert argv[0] == "/usr/bin/bwrap"
    for option in ("--unshare-user", "--disable-userns", "--unshare-pid", "--unshare-net", "--unshare-ipc",
                   "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv"):
        assert option in argv
    assert "--cap-add" not in argv
    assert argv[argv.index("--tmpfs") - 2:argv.index("--tmpfs") + 2] == ["--size", str(64 << 20), "--tmpfs", "/tmp"]
    binds = [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"]
    assert binds == ["/root/.pyenv/versions/3.11.7", "/usr"]
    made = [argv[i + 1] for i, a in enumerate(argv) if a == "--dir"]
    assert made == ["/root", "/root/.pyenv", "/root/.pyenv/versions"]  # each made 0755 before the bind
    assert all(argv[argv.index(d) - 3:argv.index(d)] == ["--perms", "0755", "--dir"] for d in made)
    assert argv[argv.index("--symlink"):argv.index("--symlink") + 3] == ["--symlink", "usr/lib", "/lib"]
    assert [argv[i + 1:i + 3] for i, a in enumerate(argv) if a == "--setenv"] == [["A", "b"], ["HOME", "/tmp"]]
    assert argv[-3:] == ["--", "/usr/bin/python3", "-V"]
    assert not any(a in argv for a in ("--bind", "--dev-bind", "--share-net"))


def test_bwrap_as_root_has_no_user_namespace_and_keeps_only_what_the_uid_switch_needs():
    argv = bwrap.command("/usr/bin/bwrap", True, ReadSet(("/usr",), ()), 64, {}, ["/usr/bin/true"])
    assert "--unshare-user" not in argv and "--disable-userns" not in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "--cap-add"] == ["CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"]


# choosing the mode


def test_auto_takes_bwrap_then_kernel_then_refuses_saying_what_is_missing():
    assert launcher.choose_mode("auto", OK_HOST) == "bwrap"
    no_userns = OK_HOST._replace(bwrap_problem="bwrap fails here: setting up uid map: Permission denied")
    assert launcher.choose_mode("auto", no_userns) == "kernel"
    with pytest.raises(SandboxError) as refused:
        launcher.choose_mode("auto", no_userns._replace(landlock_abi=0))
    message = str(refused.value)
    assert "uid map" in message and "no Landlock" in message and "DATACLAY_EE_CONFINEMENT=none" in message


def test_an_explicit_mode_that_is_unavailable_is_refused_with_its_reason():
    with pytest.raises(SandboxError, match="bwrap mode is not available: bwrap is not installed"):
        launcher.choose_mode("bwrap", OK_HOST._replace(bwrap=None, bwrap_problem="bwrap is not installed"))
    with pytest.raises(SandboxError, match="kernel mode is not available: this kernel has no Landlock"):
        launcher.choose_mode("kernel", OK_HOST._replace(landlock_abi=0))
    with pytest.raises(SandboxError, match="libseccomp2"):
        launcher.choose_mode("kernel", OK_HOST._replace(seccomp_problem="libseccomp.so.2 is missing (libseccomp2)"))
    assert launcher.choose_mode("none", OK_HOST._replace(seccomp_problem="missing", landlock_abi=0)) == "none"


# the paths exposed


def test_the_cluster_home_the_callers_home_and_the_shared_places_are_never_exposed(tmp_path):
    cluster = tmp_path / "cluster"
    cluster.mkdir()
    (tmp_path / "link").symlink_to(cluster)
    rules = Rules.for_environment({"HOME": "/root", "DATACLAY_HOME": str(cluster),
                                   "DATACLAY_STORE_PATH": "/mnt/pmem/pool"})
    for path in ("/", "/root", "/home", "/etc", str(cluster), str(cluster / "cluster.secret"), str(tmp_path / "link"),
                 "/dev/shm/dataclay-x", "/proc/1", "/tmp", "/sys/kernel", "/etc/shadow", "/mnt/pmem/pool/a"):
        assert rules.refusal(path), path
    for path in ("/usr/lib/jvm", "/root/.pyenv/versions/3.11.7", "/etc/java-17-openjdk", "/opt/jdk"):
        assert rules.refusal(path) is None, path
    assert rules.tmp_refusal(str(tmp_path / "ee")) is None  # under /tmp, holding nothing
    assert rules.tmp_refusal("/tmp") and rules.tmp_refusal("/root")


def test_the_read_set_is_minimal_and_recreates_only_unexposed_symlinks(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "sub").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "inner").symlink_to("sub")
    reads = paths.read_set([str(tmp_path / "real" / "sub"), str(tmp_path / "alias"), str(tmp_path / "real" / "inner")])
    assert reads.paths == (str(tmp_path / "real"),)
    assert reads.symlinks == ((str(tmp_path / "real"), str(tmp_path / "alias")),)


def test_the_interpreter_brings_its_installation_and_import_path_but_not_the_working_directory():
    found = paths.interpreter_paths()
    assert sys.base_prefix in found and sys.prefix in found
    assert os.getcwd() not in found


@pytest.fixture
def open_dir():
    """A directory every user may pass (pytest's tmp_path lies under a 0700 one)."""
    base = pathlib.Path(tempfile.mkdtemp(prefix="sandbox-test-"))
    base.chmod(0o755)
    yield base
    shutil.rmtree(base)


def test_reachability_for_the_slot_user_is_judged_by_the_mode_bits_on_the_way(open_dir):
    closed = open_dir / "closed"
    closed.mkdir(mode=0o700)
    (closed / "python").write_text("")
    assert paths.unreachable_by_others(str(closed / "python")).startswith(str(closed))
    os.chmod(closed, 0o755)
    os.chmod(closed / "python", 0o600)
    assert paths.unreachable_by_others(str(closed / "python")).endswith("(mode 600)")
    os.chmod(closed / "python", 0o644)
    assert paths.unreachable_by_others(str(closed / "python")) is None


# the launcher's options and refusals


@pytest.mark.parametrize("argv, complaint", [
    (["--mode", "chroot", "--", "true"], "invalid choice"),
    (["--memory-mb", "-1", "--", "true"], "0 (none) or an integer from 16"),
    (["--memory-mb", "8", "--", "true"], "0 (none) or an integer from 16"),
    (["--max-processes", "0", "--", "true"], "an integer from 1"),
    (["--max-open-files", "lots", "--", "true"], "not 'lots'"),
    (["--uid-slot", "-3", "--", "true"], "an integer from 0"),
    (["--tmp-mb", "0", "--", "true"], "an integer from 1"),
    (["--mode", "kernel", "true"], "after --"),
    (["--mode", "kernel", "--"], "after --"),
    (["--frobnicate", "--", "true"], "unrecognized arguments"),
])
def test_a_bad_option_exits_with_status_2_and_says_why(argv, complaint):
    run = subprocess.run([sys.executable, "-I", SANDBOX_DIR, *argv], capture_output=True, text=True, timeout=30)
    assert run.returncode == 2
    assert complaint in run.stderr


def test_a_refusal_of_the_launcher_exits_with_status_2_and_one_line():
    run = subprocess.run([sys.executable, "-I", SANDBOX_DIR, "--mode", "none", "--read", "usr", "--", "true"],
                         capture_output=True, text=True, timeout=30)
    assert (run.returncode, run.stderr) == (2, "sandbox: --read usr: give an absolute path\n")


@pytest.mark.parametrize("options, complaint", [
    (["--read", "lib"], "--read lib: give an absolute path"),
    (["--read", "/nonexistent/jdk"], "no such file or directory"),
    (["--read", "/"], "--read / is or holds"),
    (["--read", "/home"], "holds all of /home"),
    (["--read", "/dev/shm"], "must never see"),
])
def test_a_read_path_that_is_missing_or_forbidden_is_refused(options, complaint):
    with pytest.raises(SandboxError, match=complaint):
        launcher.plan(request(*options), OK_HOST, {"HOME": "/root", "PATH": "/usr/bin"})


def test_the_cluster_home_cannot_be_exposed_even_through_a_symlink(tmp_path):
    cluster = tmp_path / "cluster"
    cluster.mkdir()
    (tmp_path / "innocent").symlink_to(cluster)
    with pytest.raises(SandboxError, match="must never see"):
        launcher.plan(request("--read", str(tmp_path / "innocent")), OK_HOST,
                      {"HOME": "/root", "DATACLAY_HOME": str(cluster)})


def test_a_command_outside_every_exposed_path_is_refused(tmp_path):
    program = tmp_path / "tool"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    with pytest.raises(SandboxError, match="not under any path exposed"):
        launcher.plan(request(command=(str(program),)), OK_HOST, {"HOME": "/root"})
    with pytest.raises(SandboxError, match="no such executable"):
        launcher.plan(request(command=("no-such-program-here",)), OK_HOST, {"HOME": "/root", "PATH": "/usr/bin"})


def test_root_must_name_a_uid_slot_inside_the_unassigned_range():
    root = OK_HOST._replace(root=True)
    with pytest.raises(SandboxError, match="give --uid-slot"):
        launcher.plan(request(), root, {"HOME": "/root"})
    with pytest.raises(SandboxError, match="DATACLAY_EE_UID_BASE=1000: give an integer from 1879048192"):
        launcher.plan(request("--uid-slot", "1"), root, {"HOME": "/root", "DATACLAY_EE_UID_BASE": "1000"})
    with pytest.raises(SandboxError, match="is past 2147352575"):
        launcher.plan(request("--uid-slot", "268304383"), root, {"HOME": "/root"})
    planned = launcher.plan(request("--uid-slot", "3", "--mode", "bwrap"), root,
                            {"HOME": "/root", "DATACLAY_EE_UID_BASE": "2000000000"})
    assert (planned.profile.uid, planned.profile.gid) == (2000000003, 2000000003)
    assert planned.profile.limits.nproc_scope == "sandbox"  # the slot's uid is this sandbox's alone


def test_another_user_keeps_its_uid_and_none_mode_changes_nobody():
    assert launcher.plan(request("--uid-slot", "3"), OK_HOST, {"HOME": "/root"}).profile.uid is None
    none = launcher.plan(request("--mode", "none", "--uid-slot", "3"), OK_HOST._replace(root=True), {"HOME": "/root"})
    assert none.profile.uid is None


def test_kernel_mode_needs_a_private_tmp_of_the_callers(tmp_path):
    with pytest.raises(SandboxError, match="kernel mode needs --tmp"):
        launcher.plan(request("--mode", "kernel"), OK_HOST, {"HOME": "/root"})
    open_tmp = tmp_path / "open"
    open_tmp.mkdir(mode=0o755)
    with pytest.raises(SandboxError, match="mode 0700"):
        launcher.plan(request("--mode", "kernel", "--tmp", str(open_tmp)), OK_HOST, {"HOME": "/root"})
    (tmp_path / "link").symlink_to(open_tmp)
    with pytest.raises(SandboxError, match="symlinks are refused"):
        launcher.plan(request("--mode", "kernel", "--tmp", str(tmp_path / "link")), OK_HOST, {"HOME": "/root"})
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    planned = launcher.plan(request("--mode", "kernel", "--tmp", str(private), "--tmp-mb", "5"), OK_HOST,
                            {"HOME": "/root"})
    assert planned.profile.write[0] == str(private) and planned.env["TMPDIR"] == planned.env["HOME"] == str(private)
    assert planned.profile.limits.file_mb == 5 and planned.profile.keep_in_group
    assert planned.profile.parent_pid == os.getppid()  # the parent of whoever plans: the Data Service


def test_the_sandbox_gets_a_short_list_of_variables_and_its_profile(capsys):
    environ = {"HOME": "/root", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "TZ": "UTC",
               "DATACLAY_EE_THREADS": "4", "DATACLAY_PASSWORD": "hunter2", "DATACLAY_HOME": "/root/.dataclay",
               "DATACLAY_EE_SECRET": "link secret", "DATACLAY_EE_SESSION_TOKEN": "t",
               "AWS_SECRET_ACCESS_KEY": "x", "LD_PRELOAD": "/tmp/evil.so", "PYTHONPATH": "/tmp"}
    planned = launcher.plan(request("--mode", "bwrap"), OK_HOST, environ)
    assert set(planned.env) == {"PATH", "LANG", "LC_ALL", "TZ", "DATACLAY_EE_THREADS", "HOME", "TMPDIR",
                                "DATACLAY_SANDBOX"}
    assert planned.env["HOME"] == "/tmp"
    assert "not passing DATACLAY_EE_SECRET" in capsys.readouterr().err
    profile = Profile.from_json(planned.env["DATACLAY_SANDBOX"])
    assert profile.mode == "bwrap" and "/proc" in profile.read and profile.write[0] == "/tmp"
    assert planned.argv[0] == "/usr/bin/bwrap"
    assert planned.argv[-4:] == ("-S", launcher.EXEC_WRAPPER, "--", "/usr/bin/true")  # behind the exec wrapper


def test_the_process_bound_counts_the_data_services_user_only_where_nothing_else_can():
    assert launcher.plan(request("--mode", "bwrap"), OK_HOST, {"HOME": "/root"}).profile.limits.nproc_scope == "sandbox"
    none = launcher.plan(request("--mode", "none"), OK_HOST, {"HOME": "/root"})
    assert none.profile.limits.nproc_scope == "user"


# limits


def test_rlimits_are_soft_and_hard_and_no_core_is_ever_written():
    wanted = limits.wanted(Limits(memory_mb=100, max_processes=10, nproc_scope="user", open_files=64,
                                  cpu_seconds=5, file_mb=2), user_tasks=40)
    assert wanted == {resource.RLIMIT_CORE: (0, 0), resource.RLIMIT_AS: (100 << 20,) * 2,
                      resource.RLIMIT_NPROC: (50, 50), resource.RLIMIT_NOFILE: (64, 64),
                      resource.RLIMIT_CPU: (5, 6), resource.RLIMIT_FSIZE: (2 << 20,) * 2}
    assert limits.wanted(Limits(max_processes=10), user_tasks=40)[resource.RLIMIT_NPROC] == (10, 10)


def test_a_limit_above_the_hard_limit_is_reported(monkeypatch):
    monkeypatch.setattr(limits.resource, "getrlimit", lambda which: (64, 64))
    assert limits.too_high(Limits(open_files=128)) == ["RLIMIT_NOFILE 128 is above this user's hard limit 64"]


def test_the_tasks_of_a_user_include_this_process():
    assert limits.tasks_of_user(os.getuid()) >= 1


# the exec wrapper and the environment


def test_confine_from_environment_without_a_profile_says_how_to_start():
    run = subprocess.run([sys.executable, "-I", "-S", os.path.join(SANDBOX_DIR, "exec.py"), "--", "/usr/bin/true"],
                         capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin"})
    assert run.returncode == 2
    assert "DATACLAY_SANDBOX is not set" in run.stderr


def test_the_sandbox_package_imports_nothing_of_dataclay_nor_grpc():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import _standalone; _standalone.load('launcher');"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dataclay', 'grpc', 'google')))")
    run = subprocess.run([sys.executable, "-I", "-c", code, SANDBOX_DIR], capture_output=True, text=True, timeout=30)
    assert run.stdout.strip() == "[]", run.stderr
