"""The JVM options the launcher adds for the server jars' class archives, and their setting."""
import os

import pytest

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.cli.common.class_archives import archive_of, jvm_options, recording_of
from dataclay._internal.cli.common.settings import ClusterSettings


@pytest.fixture
def jar(tmp_path):
    path = tmp_path / "dataservice.jar"
    path.write_bytes(b"jar")
    return path


def test_an_archive_newer_than_its_jar_is_used(jar):
    archive_of(jar).write_bytes(b"archive")
    assert jvm_options(jar, "use") == [f"-XX:SharedArchiveFile={jar.with_suffix('.jsa')}"]


def test_an_archive_older_than_its_jar_is_left_out(jar):
    archive_of(jar).write_bytes(b"archive")
    later = archive_of(jar).stat().st_mtime + 10
    os.utime(jar, (later, later))
    assert jvm_options(jar, "use") == []


def test_a_missing_archive_or_mode_off_adds_nothing(jar):
    assert jvm_options(jar, "use") == []
    archive_of(jar).write_bytes(b"archive")
    assert jvm_options(jar, "off") == []


def test_record_mode_writes_beside_the_jar_under_a_temporary_name(jar):
    options = jvm_options(jar, "record")
    assert options[0] == f"-XX:ArchiveClassesAtExit={recording_of(jar)}"
    assert recording_of(jar) != archive_of(jar) and recording_of(jar).parent == jar.parent


def test_the_setting_defaults_to_use_and_refuses_unknown_modes(tmp_path):
    assert ClusterSettings.from_env({"DATACLAY_HOME": str(tmp_path)}).class_archives == "use"
    with pytest.raises(InvalidArgumentError, match="DATACLAY_CLASS_ARCHIVES must be one of use, off, record"):
        ClusterSettings.from_env({"DATACLAY_HOME": str(tmp_path), "DATACLAY_CLASS_ARCHIVES": "always"})
