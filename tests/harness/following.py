"""Running a command that follows output (`dataclay logs --follow`) the way a user does from a terminal:
start it, let something happen, press Ctrl-C. Used by the integration tests (tests/) and, through
pyclay/tests/conftest.py, by the unit tests."""
from __future__ import annotations

import signal
import subprocess
import time
from typing import Callable


def follow_until_interrupted(args: list, env: dict, while_following: Callable[[], None], settle: float = 1.0,
                             timeout: float = 30) -> subprocess.CompletedProcess:
    """Starts `args` as from a terminal, gives it 2 s to start following, calls `while_following()`, waits
    `settle` s for what that wrote to reach it, then sends it SIGINT and returns its exit code and output
    (the process is killed if it has not ended `timeout` s after the signal)."""
    follower = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=_as_in_a_terminal)
    try:
        time.sleep(2)
        while_following()
        time.sleep(settle)
        follower.send_signal(signal.SIGINT)
        out, err = follower.communicate(timeout=timeout)
    finally:
        follower.kill()
    return subprocess.CompletedProcess(args, follower.returncode, out, err)


def _as_in_a_terminal() -> None:
    """The follower takes Ctrl-C as it would in a terminal, even when the suite runs from a shell
    without job control, whose background commands start with SIGINT ignored (and pass that on)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
