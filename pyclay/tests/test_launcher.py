"""The launcher's view of the server processes it starts."""
import pathlib
import socket
import subprocess
import sys

from dataclay._internal.cli.common.cluster_state import ProcessRecord
from dataclay._internal.cli.local.launcher import LocalCluster
from dataclay._internal.cli.common.settings import ClusterSettings


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


FROZEN_LOGIC_MODULE = """
import sys, time
from concurrent import futures
import grpc
from dataclay._internal.proto import logicmodule_pb2 as lm, logicmodule_pb2_grpc as lm_grpc

class Backends(lm_grpc.LogicModuleServicer):
    def GetBackends(self, request, context):
        return lm.BackendList()

server = grpc.server(futures.ThreadPoolExecutor(2))
lm_grpc.add_LogicModuleServicer_to_server(Backends(), server)
port = server.add_insecure_port("127.0.0.1:0")
server.start()
print(port, flush=True)
time.sleep(120)
"""


def test_a_start_asks_a_server_again_that_was_too_busy_to_answer_in_time(tmp_path):
    # setup: a stand-in Logic Module, frozen (SIGSTOP: as a machine at load 17 may leave a JVM) for
    # longer than the liveness bound while the launcher asks it something
    import os
    import signal
    import threading
    import time
    from dataclay._internal.cli.local import launcher
    from dataclay._internal.rpc import LogicModuleClient, channels
    channels.configure(600)
    server = subprocess.Popen([sys.executable, "-c", FROZEN_LOGIC_MODULE], stdout=subprocess.PIPE, text=True)
    client = None
    try:
        port = int(server.stdout.readline())
        client = LogicModuleClient(f"127.0.0.1:{port}")
        assert client.get_backends() == []
        os.kill(server.pid, signal.SIGSTOP)
        threading.Timer(2.0, os.kill, (server.pid, signal.SIGCONT)).start()
        # run
        started = time.monotonic()
        answer = launcher._answered(client.get_backends, time.monotonic() + 30, "the Logic Module")
        # verify: answered once it thawed, not failed at the first missed ping
        assert answer == [] and time.monotonic() - started >= 1.5
        # and past the deadline, the start fails naming the server
        os.kill(server.pid, signal.SIGSTOP)
        try:
            launcher._answered(client.get_backends, time.monotonic() + 1, "the Logic Module")
            raise AssertionError("a frozen server past the deadline must fail the start")
        except launcher.StartError as e:
            assert "the Logic Module did not answer within" in str(e)
    finally:
        if client is not None:
            client.close()
        os.kill(server.pid, signal.SIGCONT)
        server.kill()
        server.wait()
        channels.configure(channels.DEFAULT_UNREACHABLE_MS)


def test_a_servers_port_is_free_and_below_the_ephemeral_range_so_no_outgoing_connection_takes_it():
    from dataclay._internal.cli.common.cluster_state import free_port
    ephemeral = int(pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    # run
    ports = [free_port() for _ in range(50)]
    others = [free_port(avoid=set(ports)) for _ in range(50)]
    # verify: each bindable now, below the range, and spread (two launchers asking at once differ)
    for port in ports + others:
        assert 10000 <= port < ephemeral
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))
    assert len(set(ports)) > 40
    assert not set(others) & set(ports)
