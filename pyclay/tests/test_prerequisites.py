"""`dataclay start` on a machine that lacks what the servers need: it says what is missing and how to
get it, and makes and starts nothing (prerequisites.py)."""
import os
import shutil
import subprocess
import sys

import pytest

from dataclay._internal.cli.local import prerequisites
from dataclay._internal.cli.local.prerequisites import PrerequisiteError, check_engine, check_java, java_major

ABSENT = {"libdataclay-test-absent.so.1": ("absent-deb1", "absent-rpm")}


def _start(tmp_path, **env):
    """Runs `dataclay start` as a user would, with only `env` (plus a home) in its environment."""
    env = {"HOME": str(tmp_path), "DATACLAY_HOME": str(tmp_path / "home"), "PATH": str(tmp_path / "empty-bin"),
           **env}
    (tmp_path / "empty-bin").mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "dataclay._internal.cli.cluster", "start"], env=env,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)


def _fake_java(tmp_path, version_line: str):
    """A JAVA_HOME whose bin/java prints `version_line` as `java -version` does (on standard error)."""
    home = tmp_path / "fake-jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\necho 'OpenJDK Runtime Environment' >&2\n")
    java.chmod(0o755)
    return home


def test_a_start_without_java_names_the_packages_and_starts_nothing(tmp_path):
    # setup: no java on PATH, no JAVA_HOME
    # run
    result = _start(tmp_path)
    # verify
    assert result.returncode == 1
    assert "no `java` on PATH and JAVA_HOME is not set" in result.stderr
    assert "Java 17 or newer" in result.stderr
    assert "sudo apt-get install openjdk-17-jre-headless" in result.stderr
    assert "sudo dnf install java-17-openjdk-headless" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "home").exists()


def test_a_java_home_without_java_is_named(tmp_path):
    not_a_jdk = tmp_path / "not-a-jdk"
    not_a_jdk.mkdir()
    result = _start(tmp_path, JAVA_HOME=str(not_a_jdk))
    assert result.returncode == 1
    assert f"JAVA_HOME has no bin/java ({not_a_jdk}/bin/java does not exist)" in result.stderr
    assert not (tmp_path / "home").exists()


def test_a_java_too_old_is_refused_with_the_version_needed(tmp_path):
    jdk = _fake_java(tmp_path, 'openjdk version "11.0.22" 2024-01-16')
    result = _start(tmp_path, JAVA_HOME=str(jdk))
    assert result.returncode == 1
    assert f"{jdk}/bin/java (from JAVA_HOME) is Java 11: too old." in result.stderr
    assert "The servers need Java 17 or newer" in result.stderr
    assert not (tmp_path / "home").exists()


def test_a_java_that_does_not_say_its_version_is_refused(tmp_path):
    jdk = _fake_java(tmp_path, "not a java at all")
    with pytest.raises(PrerequisiteError, match=r"did not say which Java it is \(exit 0: not a java at all\)"):
        check_java(str(jdk / "bin" / "java"), "JAVA_HOME")


def test_dataclay_java_wins_over_java_home(tmp_path):
    old = _fake_java(tmp_path, 'java version "1.8.0_292"')
    result = _start(tmp_path, JAVA_HOME="/nonexistent", DATACLAY_JAVA=str(old / "bin" / "java"))
    assert result.returncode == 1
    assert "(DATACLAY_JAVA) is Java 8" in result.stderr


def test_java_versions_are_read_as_their_major():
    assert java_major('openjdk version "17.0.15" 2025-04-15') == 17
    assert java_major('openjdk version "21" 2023-09-19') == 21
    assert java_major('java version "1.8.0_292"') == 8
    assert java_major('Picked up JAVA_TOOL_OPTIONS: -Xss2m\nopenjdk version "25-ea" 2025-09-16') == 25
    assert java_major("no version here") is None


def test_the_java_of_this_machine_is_accepted():
    java = shutil.which("java")
    assert java, "the build machine has a JDK (scripts/install-deps.sh)"
    assert check_java(java, "PATH") >= 17


def test_a_pmem_engine_without_pmdk_names_the_packages_and_the_other_engines():
    with pytest.raises(PrerequisiteError) as refused:
        check_engine("kv", libraries=ABSENT)
    message = str(refused.value)
    assert "the kv engine (the default) keeps objects in a pmem pool through PMDK" in message
    assert "missing here (libdataclay-test-absent.so.1)" in message
    assert "sudo apt-get install absent-deb1" in message
    assert "sudo dnf install absent-rpm" in message
    assert "dataclay start --store memory" in message and "nothing survives `dataclay stop`" in message
    assert "Nothing was started." in message


def test_an_existing_pmem_cluster_without_pmdk_is_not_offered_another_engine(tmp_path):
    with pytest.raises(PrerequisiteError) as refused:
        check_engine("heap", existing_cluster=str(tmp_path), libraries=ABSENT)
    message = str(refused.value)
    assert f"The cluster in {tmp_path} uses the heap engine" in message
    assert "--store memory" not in message


def test_engines_without_a_pmem_pool_need_no_pmdk():
    for engine in ("memory", "postgres"):
        check_engine(engine, libraries=ABSENT)


def test_this_machine_has_pmdk():
    assert prerequisites.missing_libraries(prerequisites.PMDK_LIBRARIES) == []
    check_engine("kv")



def test_this_machine_can_confine_model_code_and_unconfined_needs_nothing():
    assert prerequisites.confinement_problem(dict(os.environ)) is None
    assert prerequisites.confinement_problem({"DATACLAY_EE_CONFINEMENT": "none", "PATH": ""}) is None


def test_dataclay4s_distribution_beside_pmclay_is_noted(tmp_path):
    # setup: what `pip install dataclay` (dataClay 4) leaves in site-packages
    info = tmp_path / "dataclay-4.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dataclay\nVersion: 4.1.0\n")
    # run
    note = prerequisites.rival_distribution([str(tmp_path)])
    # verify
    assert note is not None and "dataClay 4's `dataclay` 4.1.0 is installed" in note
    assert "pip uninstall dataclay" in note
    assert prerequisites.rival_distribution([str(tmp_path / "nothing")]) is None
    assert prerequisites.rival_distribution() is None  # this environment has pmclay alone
