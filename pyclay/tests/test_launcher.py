"""The launcher's view of the server processes it starts."""
import subprocess
import sys

from dataclay._internal.cli.cluster_state import ProcessRecord
from dataclay._internal.cli.launcher import LocalCluster
from dataclay._internal.cli.settings import ClusterSettings


def test_a_process_just_spawned_counts_as_alive_until_it_exits(tmp_path):
    # /proc shows a just-spawned java without its command line for a moment (the java launcher
    # re-executes itself), which once made `dataclay start` report a healthy Logic Module as dead
    cluster = LocalCluster(ClusterSettings.from_env({"DATACLAY_HOME": str(tmp_path)}))
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    cluster._spawned[proc.pid] = proc
    record = ProcessRecord(name="logicmodule", port=1, pid=proc.pid, jar="logicmodule.jar")
    assert not record.running()  # its command line is not a java -jar one
    assert not cluster._ended(record)
    proc.stdin.close()
    proc.wait()
    assert cluster._ended(record)


def test_a_process_of_an_earlier_start_is_judged_by_its_command_line(tmp_path):
    cluster = LocalCluster(ClusterSettings.from_env({"DATACLAY_HOME": str(tmp_path)}))
    assert cluster._ended(ProcessRecord(name="backend-1", port=1, pid=0, jar="dataservice.jar"))


def test_java_opts_come_before_the_class_archive_and_the_jar(tmp_path):
    settings = ClusterSettings.from_env({"DATACLAY_HOME": str(tmp_path), "DATACLAY_CLASS_ARCHIVES": "record",
                                         "DATACLAY_JAVA_OPTS": "-Xmx2g  -XX:CompileThresholdScaling=0.5"})
    jar = tmp_path / "dataservice.jar"
    command = LocalCluster(settings).java_command(jar)
    assert command[:3] == [settings.java, "-Xmx2g", "-XX:CompileThresholdScaling=0.5"]
    assert command[3].startswith("-XX:ArchiveClassesAtExit=")
    assert command[-2:] == ["-jar", str(jar)]
