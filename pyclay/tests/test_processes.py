import os
import signal
import subprocess
import sys

from dataclay._internal import processes


def test_a_live_process_runs_and_an_exited_one_does_not():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert processes.runs(os.getpid())
        assert processes.runs(child.pid)
        os.kill(child.pid, signal.SIGKILL)
        # not yet reaped: a zombie, which no longer runs
        assert processes.await_exit([child.pid], timeout=10)
        assert not processes.runs(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not processes.runs(child.pid)
    assert not processes.runs(0) and not processes.runs(-1)


def test_await_exit_gives_up_after_its_timeout():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert not processes.await_exit([child.pid], timeout=0.1)
    finally:
        child.kill()
        child.wait()
