"""The execution environment process (`python -m dataclay._internal.ee`, started through the sandbox
launcher as a Data Service starts it) against a real peer playing the Data Service's side of its
framed link on standard input and output: hello, concurrent execution, large frames, deploy, evict,
protocol violations and exit."""
import os
import pathlib
import pickle
import queue
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from dataclay._internal.processes import runs
from dataclay._internal.proto import common_pb2, executionenv_pb2
from dataclay._internal.serialization.decoder import loads
from dataclay._internal.serialization.encoder import dumps_args
from dataclay._internal.serialization.policy import ClientClassPolicy
from harness.waiting import wait_until
from peers import LinkPeer, model_files

PYCLAY = pathlib.Path(__file__).resolve().parents[1]
BACKEND = str(uuid.uuid4())
SLEEPER = textwrap.dedent('''
    import threading
    import time
    from dataclay import DataClayObject, activemethod

    GATE = threading.Event()

    class Sleeper(DataClayObject):
        naps: int

        def __init__(self):
            self.naps = 0

        @activemethod
        def nap(self, seconds, started=None):
            if started:
                open(started, "w").close()
            time.sleep(seconds)
            self.naps += 1
            return seconds

        @activemethod
        def wait_for_gate(self, seconds):
            return GATE.wait(seconds)

        @activemethod
        def open_gate(self):
            GATE.set()
''')


class Environment:
    """One execution environment process linked to a LinkPeer, started through the sandbox launcher
    (mode none: these tests are about the link, test_sandbox_escapes.py about confinement); always
    stopped by the fixture. The models are `model_root` plus sleepers.py, sent as the first deploy."""

    def __init__(self, tmp_path: pathlib.Path, parent_script: bool = False, launcher: bool = True):
        tmp_path.mkdir(parents=True)
        self.work = tmp_path
        self.files = model_files(PYCLAY / "tests" / "model_root")
        self.files["sleepers.py"] = SLEEPER.encode()
        self.peer = LinkPeer()
        env = {k: v for k, v in os.environ.items() if not k.startswith("DATACLAY_")}
        env.update(PYTHONPATH=str(PYCLAY), DATACLAY_EE_BACKEND_ID=BACKEND, DATACLAY_EE_THREADS="4")
        command = [sys.executable, "-m", "dataclay._internal.ee"]
        if launcher:
            private = tmp_path / "private"
            private.mkdir(mode=0o700)
            command = [sys.executable, "-m", "dataclay._internal.sandbox", "--mode", "none", "--tmp", str(private),
                       "--self-confining", "--", *command]
        if parent_script:
            command = [sys.executable, "-c", "import subprocess, sys, time; p = subprocess.Popen(sys.argv[1:]); "
                       "print(p.pid, file=sys.stderr, flush=True); time.sleep(600)", *command]
        read_end, write_end = self.peer.environment_fds()
        self.process = subprocess.Popen(command, env=env, stdin=read_end, stdout=write_end, stderr=subprocess.PIPE,
                                        text=True)
        self.peer.start(close_environment_ends=True)

    def store(self, root) -> str:
        return self.peer.store(root, BACKEND)[0]

    def store_sleeper(self) -> str:
        """Stores a sleepers.Sleeper (a class this test process never imports) as its stored form."""
        oid = str(uuid.uuid4())
        self.peer.stored[oid] = common_pb2.ObjectData(
            id=oid, header=common_pb2.ObjectHeader(class_name="sleepers.Sleeper", language=common_pb2.PYTHON,
                                                   dataset="alice"),
            fields=[common_pb2.Field(name="naps", value=pickle.dumps(0, 5))])
        return oid

    def call(self, call_id: int, object_id: str, class_name: str, method: str, *args):
        self.peer.send_execute(call_id=call_id, object_id=object_id, class_name=class_name,
                               kind=executionenv_pb2.CALL_METHOD, name=method, payload=dumps_args(args, {}))

    def nap(self, call_id: int, object_id: str, seconds: float = 0):
        """Runs Sleeper.nap(seconds) on `object_id` to its end; its result."""
        self.call(call_id, object_id, "sleepers.Sleeper", "nap", seconds)
        return self.result()

    def start_nap(self, call_id: int, object_id: str, seconds: float) -> None:
        """Starts Sleeper.nap(seconds) on `object_id`; returns once the nap has begun (its result comes later)."""
        started = self.work / f"nap-{call_id}-started"
        self.call(call_id, object_id, "sleepers.Sleeper", "nap", seconds, str(started))
        _wait_for_file(started)

    def result(self, timeout: float = 20):
        message = self.peer.next_message(timeout)
        assert message.WhichOneof("kind") == "result", message
        return message.result

    def hello(self):
        """Waits for the hello, then deploys the models, as the Data Service does. An environment that
        says none in time is stopped, and the failure shows what it wrote to its standard error."""
        try:
            message = self.peer.next_message(30)
        except queue.Empty:
            self.process.kill()
            code = self.process.wait(timeout=10)
            raise AssertionError(f"the environment sent no hello within 30 s (exit status {code} once killed); "
                                 f"its standard error:\n{self.process.stderr.read()[-4000:]}") from None
        assert message.WhichOneof("kind") == "hello"
        self.peer.deploy(self.files)
        return message.hello

    def wait(self, timeout: float = 20) -> int:
        return self.process.wait(timeout=timeout)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        self.peer.stop()


@pytest.fixture
def environments(tmp_path):
    started = []

    def start(**options) -> Environment:
        env = Environment(tmp_path / str(len(started)), **options)
        started.append(env)
        return env

    yield start
    for env in started:
        env.stop()


@pytest.mark.timeout(60)
def test_environment_says_hello_and_answers_calls(environments):
    env = environments()
    hello = env.hello()
    from unitmodels.shop import Item
    oid = env.store(Item("pen", 3))
    env.call(7, oid, "unitmodels.shop.Item", "raise_price", 4)
    result = env.result()
    assert hello.runtime_version.startswith("pmclay ") and hello.confinement.startswith("none")
    assert result.call_id == 7 and not result.HasField("error")
    assert loads(result.result, ClientClassPolicy()) == 7
    assert [d.id for d in result.deltas] == [oid]
    assert env.peer.load_calls == [([oid], 7)]


@pytest.mark.timeout(60)
def test_calls_run_concurrently_and_results_come_back_in_any_order(environments):
    env = environments()
    env.hello()
    slow, fast = env.store_sleeper(), env.store_sleeper()
    env.call(1, slow, "sleepers.Sleeper", "nap", 1.5)
    env.call(2, fast, "sleepers.Sleeper", "nap", 0.0)
    first, second = env.result(), env.result()
    assert (first.call_id, second.call_id) == (2, 1)


@pytest.mark.timeout(60)
def test_errors_travel_back_in_the_result(environments):
    env = environments()
    env.hello()
    from unitmodels.shop import Item
    oid = env.store(Item("pen", 3))
    env.call(3, oid, "unitmodels.shop.Item", "fail_after_change", "bad")
    env.call(4, oid, "unitmodels.shop.Item", "no_such_method")
    env.peer.send_execute(call_id=5, object_id=oid, class_name="unitmodels.shop.Item", kind=0, name="x")
    errors = {r.call_id: r.error for r in (env.result(), env.result(), env.result())}
    assert errors[3].code == common_pb2.REMOTE_EXCEPTION and errors[3].remote_type == "builtins.ValueError"
    assert errors[4].code == common_pb2.METHOD_DOES_NOT_EXIST
    assert errors[5].code == common_pb2.INVALID_ARGUMENT


@pytest.mark.timeout(60)
def test_evicted_objects_are_loaded_again(environments):
    env = environments()
    env.hello()
    oid = env.store_sleeper()
    env.nap(1, oid)
    env.peer.send(executionenv_pb2.DataServiceMessage(evict=executionenv_pb2.EvictRequest(ids=[oid])))
    env.nap(2, oid)
    assert len(env.peer.load_calls) == 2


@pytest.mark.timeout(60)
def test_deploy_of_an_unchanged_or_new_module_keeps_serving(environments):
    env = environments()
    env.hello()
    oid = env.store_sleeper()
    env.nap(1, oid)
    env.peer.deploy({**env.files, "extra.py": b"VALUE = 1\n"})
    assert env.nap(2, oid).call_id == 2 and env.process.poll() is None


@pytest.mark.timeout(60)
def test_deploy_that_changes_a_loaded_module_finishes_calls_then_exits_3(environments):
    env = environments()
    env.hello()
    oid, other = env.store_sleeper(), env.store_sleeper()
    env.start_nap(1, oid, 1.0)
    changed = SLEEPER + "\nCHANGED = True\n"
    env.peer.deploy({**env.files, "sleepers.py": changed.encode()})
    env.call(2, other, "sleepers.Sleeper", "nap", 0)
    results = {r.call_id: r for r in (env.result(), env.result())}
    assert env.wait() == 3
    assert env.peer.ended.wait(10) and env.peer.received.empty()
    assert not results[1].HasField("error")
    assert results[2].error.code == common_pb2.BACKEND_UNAVAILABLE


@pytest.mark.timeout(60)
def test_environment_exits_promptly_at_end_of_stream_even_with_a_call_running(environments):
    env = environments()
    env.hello()
    oid = env.store_sleeper()
    env.start_nap(1, oid, 30.0)
    began = time.monotonic()
    env.peer.close_link()
    code = env.wait()
    assert code == 0 and time.monotonic() - began < 2.0


@pytest.mark.timeout(60)
def test_an_environment_not_started_by_the_sandbox_launcher_refuses_to_run(environments):
    env = environments(launcher=False)
    assert env.wait() == 2
    assert "cannot confine" in env.process.stderr.read() and env.peer.received.empty()


@pytest.mark.timeout(60)
def test_a_withdrawn_model_makes_the_environment_restart_once_its_module_was_loaded(environments):
    env = environments()
    env.hello()
    oid = env.store_sleeper()
    env.nap(1, oid)
    env.peer.deploy({path: content for path, content in env.files.items() if path != "sleepers.py"})
    assert env.wait() == 3


@pytest.mark.timeout(60)
@pytest.mark.parametrize("frame", [b"\x80\x00\x00\x00", b"\x00\x00\x00\x03\xff\xff\xff"],
                         ids=["length-over-2^31-1", "body-not-a-message"])
def test_malformed_frame_closes_the_link_and_the_environment_exits_1(environments, frame):
    env = environments()
    env.hello()
    env.peer.send_raw(frame)
    assert env.wait() == 1
    assert env.peer.ended.wait(10)
    assert "protocol violation" in env.process.stderr.read()


@pytest.mark.timeout(120)
def test_frames_larger_than_the_read_buffer_round_trip(environments):
    env = environments()
    env.hello()
    from unitmodels.shop import Item
    oid = env.store(Item("pen", 3))
    big = os.urandom(32 * 1024 * 1024)
    env.peer.send_execute(call_id=1, object_id=oid, class_name="unitmodels.shop.Item", kind=executionenv_pb2.SET_FIELD,
                          name="name", payload=pickle.dumps(big, 5))
    written = env.result(60)
    env.peer.send_execute(call_id=2, object_id=oid, class_name="unitmodels.shop.Item", kind=executionenv_pb2.GET_FIELD,
                          name="name")
    read = env.result(60)
    assert written.call_id == 1 and not written.HasField("error")
    [delta] = written.deltas
    assert [f.name for f in delta.changed_fields] == ["name"] and pickle.loads(delta.changed_fields[0].value) == big
    assert read.call_id == 2 and loads(read.result, ClientClassPolicy()) == big


@pytest.mark.timeout(60)
def test_a_call_blocked_on_another_call_completes_when_that_call_runs(environments):
    env = environments()
    env.hello()
    waiter, opener = env.store_sleeper(), env.store_sleeper()
    env.call(1, waiter, "sleepers.Sleeper", "wait_for_gate", 20.0)
    env.call(2, opener, "sleepers.Sleeper", "open_gate")
    first, second = env.result(), env.result()
    assert (first.call_id, second.call_id) == (2, 1)
    assert loads(second.result, ClientClassPolicy()) is True


@pytest.mark.timeout(60)
def test_environment_exits_when_its_parent_dies(environments):
    env = environments(parent_script=True)
    child = int(env.process.stderr.readline())
    env.hello()
    env.process.send_signal(signal.SIGKILL)
    env.process.wait(timeout=10)
    wait_until(lambda: not runs(child), 10, f"the environment's child {child} to end", interval=0.1)


def _wait_for_file(path: pathlib.Path) -> None:
    wait_until(path.exists, 20, f"{path} to be created", interval=0.02)
