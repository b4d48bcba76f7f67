"""The local runtime's worker process and the task channels of its forked executors. The worker is
a fresh interpreter (`python -m storage._worker`), as a COMPSs worker is a process of its own: it
never inherits the master's gRPC channels, and its executors are forked before any connection."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

from dataclay._internal import processes
from dataclay.exceptions import DataClayException
from storage import _wire


class WorkerStartError(DataClayException, RuntimeError):
    """The worker process or one of its executors could not start (the message says why)."""


class WorkerPool:
    """A started worker process with `size` executors, each reached through one channel."""

    def __init__(self, size: int, config_file: str | None, start_timeout: float):
        pairs = [socket.socketpair() for _ in range(size)]
        theirs = [theirs.fileno() for _, theirs in pairs]
        env = dict(os.environ)
        # The master's import path, so that the executors import tasks and models exactly as the master does.
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p or os.curdir) for p in sys.path)
        self.process = subprocess.Popen([sys.executable, "-m", "storage._worker", config_file or "", *map(str, theirs)],
                                        pass_fds=theirs, env=env)
        for _, end in pairs:
            end.close()
        self.channels = [mine for mine, _ in pairs]
        self.executor_pids: list[int] = []
        try:
            for channel in self.channels:
                self.executor_pids.append(self._hello(channel, start_timeout))
        except BaseException:
            self.stop(timeout=5)
            raise

    def _hello(self, channel: socket.socket, timeout: float) -> int:
        channel.settimeout(timeout)
        try:
            hello = _wire.recv(channel)
        except (TimeoutError, _wire.ChannelClosed) as e:
            raise WorkerStartError(f"a worker executor did not become ready within {timeout:.0f} s "
                                   f"(worker exit code {self.process.poll()}): {e}") from None
        finally:
            channel.settimeout(None)
        if hello[0] != "ready":
            raise WorkerStartError(f"worker executor {hello[1]} could not start: {hello[2]}")
        return hello[1]

    def stop(self, timeout: float) -> int:
        """Tells every executor to end, waits up to `timeout` s for the worker, then kills what is left
        and waits (up to `timeout` s again) until it has died; returns the worker's exit code."""
        for channel in self.channels:
            try:
                _wire.send(channel, None)
                # Wakes a dispatcher still waiting on this channel; the executor still reads what was sent.
                channel.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # that executor is gone already
            channel.close()
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            for pid in [*self.executor_pids, self.process.pid]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            code = self.process.wait(timeout=timeout)
            # The executors are the worker's children, not ours: wait until they have died too.
            processes.await_exit(self.executor_pids, timeout)
            return code
