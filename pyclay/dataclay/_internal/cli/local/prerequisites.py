"""What the servers of a local cluster need of this machine, checked by `dataclay start` before it
makes or starts anything: a Java runtime new enough for the jars, and, for the engines that keep a
pmem pool (kv, the default, heap and 2lm), PMDK's libraries, which llpl's native code links to. A
machine that cannot confine model code (no bubblewrap, no Landlock or libseccomp) gets a note: objects
are stored and read there, but their methods cannot run.

A missing PMDK is refused, not worked around: the only engine that needs nothing more is `memory`,
which keeps nothing across a stop, and a cluster that silently chose it would lose what its user
believed stored. The message names the packages to install and `--store memory` as the explicit
choice for trying things out."""
from __future__ import annotations

import ctypes
import importlib.metadata
import platform
import sys
import re
import subprocess

from dataclay.exceptions import DataClayException
from dataclay._internal import engines

MIN_JAVA = 17  # the jars are compiled with --release 17 (pom.xml)
JAVA_TIMEOUT_S = 30.0
# what llpl's libllpl.so links to (readelf -d), and the packages that hold it: Debian/Ubuntu, RHEL/Fedora
PMDK_LIBRARIES = {"libpmemobj.so.1": ("libpmemobj1", "libpmemobj"),
                  "libpmempool.so.1": ("libpmempool1", "libpmempool")}
LLPL_MACHINES = ("x86_64", "amd64")  # llpl 1.2 ships its native library for linux/amd64 only

INSTALL_JAVA = (f"\n  The servers need Java {MIN_JAVA} or newer (a JRE is enough). Install it:"
                "\n    Debian/Ubuntu:     sudo apt-get install openjdk-17-jre-headless"
                "  (Debian 13: openjdk-21-jre-headless)"
                "\n    RHEL/Rocky/Fedora: sudo dnf install java-17-openjdk-headless  (or java-21-openjdk-headless)"
                "\n  or point JAVA_HOME at an installed JDK or JRE (or DATACLAY_JAVA at its java executable)."
                "\n  Nothing was started.")


class PrerequisiteError(DataClayException):
    """This machine lacks something the servers need; the message says what and how to get it."""

    code = "INVALID_ARGUMENT"


def check_java(java: str, named_by: str) -> int:
    """The major version of `java` (named by the setting `named_by`: DATACLAY_JAVA, JAVA_HOME or PATH);
    PrerequisiteError when it cannot be run or is older than MIN_JAVA."""
    try:
        result = subprocess.run([java, "-version"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                timeout=JAVA_TIMEOUT_S)
    except FileNotFoundError:
        raise PrerequisiteError(f"no Java runtime: {_nowhere(java, named_by)}.{INSTALL_JAVA}") from None
    except PermissionError:
        raise PrerequisiteError(f"no Java runtime: {java} ({_setting(java, named_by)}) is not executable."
                                f"{INSTALL_JAVA}") from None
    except (OSError, subprocess.TimeoutExpired) as e:
        raise PrerequisiteError(f"cannot run `{java} -version` ({_setting(java, named_by)}): {e}."
                                f"{INSTALL_JAVA}") from None
    output = result.stderr + result.stdout
    major = java_major(output)
    if result.returncode != 0 or major is None:
        said = next((line for line in output.splitlines() if line.strip()), "nothing")
        raise PrerequisiteError(f"`{java} -version` ({_setting(java, named_by)}) did not say which Java it is "
                                f"(exit {result.returncode}: {said[:200]}).{INSTALL_JAVA}")
    if major < MIN_JAVA:
        raise PrerequisiteError(f"{java} ({_setting(java, named_by)}) is Java {major}: too old.{INSTALL_JAVA}")
    return major


def java_major(version_output: str) -> int | None:
    """The major version in what `java -version` printed (`"17.0.15"` is 17, `"1.8.0_292"` is 8)."""
    found = re.search(r'version "(\d+)(?:\.(\d+))?', version_output)
    if not found:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def missing_libraries(names) -> list[str]:
    """Those of the shared libraries `names` the dynamic linker cannot load here (what a JVM's
    System.load of llpl's library would fail on)."""
    missing = []
    for name in names:
        try:
            ctypes.CDLL(name)
        except OSError:
            missing.append(name)
    return missing


def check_engine(engine: str, existing_cluster: str | None = None, libraries: dict = PMDK_LIBRARIES) -> None:
    """PrerequisiteError when `engine` keeps a pmem pool and this machine cannot open one (no PMDK, or a
    processor llpl has no native code for); `existing_cluster` names the home of a cluster that
    already uses the engine (it cannot switch); `libraries` maps each library needed to its packages."""
    if not engines.engine(engine).pmem_pool:
        return
    machine = platform.machine().lower()
    if machine not in LLPL_MACHINES:
        problem = (f"the {engine} engine keeps objects in a pmem pool through llpl, whose native library exists "
                   f"for x86-64 Linux only, and this machine is {platform.machine()}")
        install = None
    else:
        missing = missing_libraries(libraries)
        if not missing:
            return
        debian = " ".join(libraries[m][0] for m in missing)
        rhel = " ".join(libraries[m][1] for m in missing)
        problem = (f"the {engine} engine{' (the default)' if engine == engines.default_engine().name else ''} keeps objects in a pmem pool "
                   f"through PMDK, and its libraries are missing here ({', '.join(missing)})")
        install = (f"\n  Install them:\n    Debian/Ubuntu:     sudo apt-get install {debian}"
                   f"\n    RHEL/Rocky/Fedora: sudo dnf install {rhel}")
    if existing_cluster:
        fix = (install or "") + (f"\n  The cluster in {existing_cluster} uses the {engine} engine, so its pools need "
                                 f"them (another DATACLAY_HOME may hold a cluster on another engine).")
    else:
        fix = (install + "\n  or choose" if install else "\n  Choose") + (
            " another engine:\n    dataclay start --store memory     objects in memory only: nothing survives "
            "`dataclay stop` (for trying things out)\n    dataclay start --store postgres   durable, in PostgreSQL "
            "(DATACLAY_STORE_URL: its JDBC URL)")
    raise PrerequisiteError(f"{problem}.{fix}\n  Nothing was started.")



def confinement_problem(environ: dict[str, str]) -> str | None:
    """Why the backends could not start an execution environment on this machine with the cluster's
    DATACLAY_EE_CONFINEMENT (auto by default), the sandbox's own words; None when they can."""
    from dataclay._internal.sandbox.launcher import Host, choose_mode
    from dataclay._internal.sandbox.profiles import SandboxError
    mode = environ.get("DATACLAY_EE_CONFINEMENT") or "auto"
    if mode == "none":
        return None
    try:
        choose_mode(mode, Host.detect(mode, environ))
    except SandboxError as e:
        return (f"methods of stored objects cannot run on this machine (objects can still be stored and read): "
                f"{e}. To confine model code, install bubblewrap (Debian/Ubuntu/RHEL: bubblewrap)")
    return None


def rival_distribution(path: list[str] | None = None) -> str | None:
    """A note when dataClay 4's `dataclay` distribution is installed beside pmclay (in `path`, default
    sys.path): both install the package `dataclay`, so whichever was installed last overwrote the
    other's files, and uninstalling either breaks the one left."""
    for found in importlib.metadata.distributions(path=sys.path if path is None else path):
        if (found.metadata["Name"] or "").lower() == "dataclay":
            return (f"dataClay 4's `dataclay` {found.version} is installed in this environment too, and both it "
                    f"and pmclay provide the package `dataclay`: run `pip uninstall dataclay`, then "
                    f"`pip install --force-reinstall --no-deps pmclay` (pmclay runs dataClay 4 programs unchanged)")
    return None


def _setting(java: str, named_by: str) -> str:
    return {"DATACLAY_JAVA": "DATACLAY_JAVA", "JAVA_HOME": "from JAVA_HOME"}.get(named_by, "found on PATH")


def _nowhere(java: str, named_by: str) -> str:
    if named_by == "DATACLAY_JAVA":
        return f"DATACLAY_JAVA={java} does not exist"
    if named_by == "JAVA_HOME":
        return f"JAVA_HOME has no bin/java ({java} does not exist)"
    return "no `java` on PATH and JAVA_HOME is not set"
