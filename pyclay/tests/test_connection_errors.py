"""A server that cannot be reached is named with its address and what to do, on every path a client
takes (sync and asyncio stubs, api.init, Client), with none of gRPC's words or the library's frames."""
import asyncio
import socket
import subprocess
import sys

import pytest

from dataclay.exceptions import BackendUnavailableError, ClassNotRegisteredError
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient
from dataclay._internal.rpc.aio import AsyncLogicModuleClient
from dataclay._internal.serialization.graph import GraphWriter

OID = "00000000-0000-4000-8000-000000000000"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_logic_module_that_is_not_running_is_named_with_how_to_start_one():
    port = _closed_port()
    with pytest.raises(BackendUnavailableError) as caught:
        LogicModuleClient(f"127.0.0.1:{port}").health(timeout=5)
    message = str(caught.value)
    assert message.startswith(f"cannot reach the Logic Module at 127.0.0.1:{port} (connection refused): "
                              f"is the cluster running? Start one with 'dataclay start'")
    assert "DATACLAY_HOST/DATACLAY_PORT" in message and "failed to connect" not in message
    assert caught.value.connect_failed and caught.value.__cause__ is None


def test_the_asyncio_client_says_the_same():
    port = _closed_port()

    async def ask():
        client = AsyncLogicModuleClient(f"127.0.0.1:{port}")
        try:
            return await client.health(timeout=5)
        finally:
            await client.aclose()

    with pytest.raises(BackendUnavailableError, match=r"cannot reach the Logic Module at .*is the cluster running"):
        asyncio.run(ask())


def test_a_backend_that_is_not_running_points_at_dataclay_status():
    port = _closed_port()
    with pytest.raises(BackendUnavailableError) as caught:
        DataServiceClient(f"127.0.0.1:{port}", "token").call_method(OID, "m", b"")
    assert str(caught.value).startswith(f"cannot reach the backend at 127.0.0.1:{port} (connection refused): "
                                        f"is it running? 'dataclay status'")
    assert caught.value.connect_failed


def test_a_host_with_no_address_is_named():
    with pytest.raises(BackendUnavailableError, match=r"no host named 'no-such-host\.invalid'.*dataclay start"):
        LogicModuleClient("no-such-host.invalid:1").health(timeout=10)


@pytest.mark.parametrize("opening", ["from dataclay import api; api.init()",
                                     "from dataclay import Client; Client().start()"])
def test_opening_a_session_with_no_cluster_shows_the_message_not_the_librarys_frames(tmp_path, opening):
    env = {"PATH": "/usr/bin:/bin", "DATACLAY_HOME": str(tmp_path), "DATACLAY_HOST": "127.0.0.1",
           "DATACLAY_PORT": str(_closed_port()), "DATACLAY_USER": "alice", "DATACLAY_PASSWORD": "secret-password"}
    result = subprocess.run([sys.executable, "-c", opening], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "BackendUnavailableError: cannot reach the Logic Module" in result.stderr
    # the user's line and the one that raises: no gRPC, no runtime, no chained "During handling"
    assert result.stderr.count('  File "') == 2, result.stderr
    assert "grpc" not in result.stderr and "During handling" not in result.stderr


def test_an_object_of_a_class_of_the_script_being_run_is_refused_before_it_is_sent():
    script = "\n".join([
        "from dataclay import DataClayObject",
        "from dataclay._internal.serialization.graph import GraphWriter",
        "class Point(DataClayObject):",
        "    x: int",
        "GraphWriter('b').add_root(Point())",
    ])
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert "ClassNotRegisteredError: class Point is defined in the script being run (module __main__)" in result.stderr
    assert "never be stored" in result.stderr
    assert "dataclaycmd NewModel <user> - <namespace> <directory> python" in result.stderr
