import os
import pathlib
import signal
import subprocess
import sys
import time

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


def test_a_process_whose_main_thread_ended_runs_while_another_thread_does():
    # setup: the main thread ends (a zombie in /proc/<pid>/stat) while a thread of the process sleeps on
    child = subprocess.Popen([sys.executable, "-c", "import ctypes, threading, time\n"
                              "threading.Thread(target=time.sleep, args=(60,)).start()\n"
                              "ctypes.CDLL(None).pthread_exit(None)"])
    try:
        deadline = time.monotonic() + 10
        while _main_thread_state(child.pid) != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        # run / verify
        assert _main_thread_state(child.pid) == "Z"
        assert processes.runs(child.pid)
        os.kill(child.pid, signal.SIGKILL)
        assert processes.await_exit([child.pid], timeout=10)
    finally:
        child.kill()
        child.wait()


def test_the_members_of_a_group_are_its_running_processes():
    # setup
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    try:
        # run / verify
        assert processes.group_members(process.pid) == [process.pid]
    finally:
        process.kill()
        process.wait()
    assert processes.group_members(process.pid) == []


def _main_thread_state(pid: int) -> str:
    return pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
