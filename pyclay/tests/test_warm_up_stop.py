"""How a warm-up pass past its time is stopped: it and its workers (one process group) are killed,
and the launcher goes on only once none of them runs, even a worker slow to exit."""
import subprocess
import sys

from dataclay._internal import processes
from dataclay._internal.cli.local import warm_up

# a pass whose worker holds 1 GiB it has touched: freeing it makes the worker slow to exit after SIGKILL
PASS = """
import subprocess, sys
worker = subprocess.Popen([sys.executable, "-c", "import sys, time\\n"
                           "held = bytearray(1 << 30)\\n"
                           "for i in range(0, len(held), 4096): held[i] = 1\\n"
                           "print('ready', flush=True)\\n"
                           "time.sleep(600)"], stdout=subprocess.PIPE, text=True)
assert worker.stdout.readline().strip() == "ready"
print(worker.pid, flush=True)
import time
time.sleep(600)
"""


def test_a_stopped_pass_returns_once_its_slow_to_exit_worker_has_exited():
    # setup: a pass in a process group of its own, as run() starts it, with a worker that holds memory
    process = subprocess.Popen([sys.executable, "-c", PASS], stdout=subprocess.PIPE, text=True,
                               start_new_session=True)
    worker = int(process.stdout.readline())
    # run
    warm_up._stop_group(process)
    # verify: neither runs any more (an exited worker is a zombie until init reaps it, or gone)
    assert process.returncode is not None
    assert processes.group_members(process.pid) == []
    assert not processes.runs(worker)
