"""Running a command that follows output (`dataclay logs --follow`) the way a user does from a terminal:
start it, let something happen, press Ctrl-C. Used by the integration tests (tests/) and, through
pyclay/tests/conftest.py, by the unit tests."""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from typing import Callable


def follow_until_interrupted(args: list, env: dict, while_following: Callable[[], None], settle: float = 1.0,
                             timeout: float = 30) -> subprocess.CompletedProcess:
    """Starts `args` as from a terminal, gives it 2 s to start following, calls `while_following()`, waits
    `settle` s for what that wrote to reach it, then sends it SIGINT and returns its exit code and output
    (the process is killed if it has not ended `timeout` s after the signal)."""
    follower = subprocess.Popen([*_AS_IN_A_TERMINAL, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    try:
        time.sleep(2)
        while_following()
        time.sleep(settle)
        follower.send_signal(signal.SIGINT)
        out, err = follower.communicate(timeout=timeout)
    finally:
        follower.kill()
    return subprocess.CompletedProcess(args, follower.returncode, out, err)


# The follower takes Ctrl-C as it would in a terminal, even when the suite runs from a shell without job
# control, whose background commands start with SIGINT ignored (and pass that on). A shim that resets
# SIGINT and execs the command does it, not a `preexec_fn`: that runs Python in a fork of this process,
# which has gRPC's threads, and gRPC's fork handlers restart its poller in the child, which then aborts
# (SIGABRT, "epoll_wait error: Bad file descriptor") when the child closes its descriptors before exec.
_AS_IN_A_TERMINAL = [sys.executable, "-c",
                     "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                     "os.execvp(sys.argv[1], sys.argv[1:])"]
