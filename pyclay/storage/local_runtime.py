"""A small stand-in for the COMPSs runtime, for machines where COMPSs is not installed. It offers
PyCOMPSs' names (`task`, `IN`, `INOUT`, `compss_wait_on`, `compss_barrier`) and runs task calls on a
pool of forked worker processes that drive `storage.api` exactly as a COMPSs worker does:

    from storage.local_runtime import INOUT, LocalRuntime, compss_barrier, task

    @task(returns=dict)
    def word_count(text):                     # `text`: a persistent object, sent by ID (getByID there)
        return text.word_count()

    @task(stats=INOUT)
    def merge(stats, partial):                # works on a new version of `stats` (newVersion)
        stats.merge_word_counts(partial)

    with LocalRuntime(workers=4):             # init(); a worker process: initWorker, fork, initWorkerPostFork
        merge(stats, word_count(text))
        compss_barrier()                      # waits, then consolidateVersion of each written object

Tasks must be module-level functions (workers import them by name; a script's main part must sit
under `if __name__ == "__main__":`). INOUT applies to persistent objects. Without a started
runtime a task call runs at once in the calling process, as PyCOMPSs runs a program started with
plain `python`: that is the sequential run."""
from __future__ import annotations

import functools
import inspect
import os
import sys
import threading
from typing import NamedTuple

from dataclay.exceptions import InvalidArgumentError
from storage import api
from storage._pool import WorkerPool, WorkerStartError
from storage._scheduler import IN, INOUT, Future, Scheduler, TaskFailedError

__all__ = ["task", "IN", "INOUT", "compss_wait_on", "compss_barrier", "LocalRuntime", "Future", "TaskFailedError",
           "WorkerStartError"]

_lock = threading.Lock()
_running = None  # the started LocalRuntime of this process, if any


class TaskSpec(NamedTuple):
    """What the runtime knows of a @task function."""

    function: object
    name: str
    signature: inspect.Signature
    directions: dict
    returns: object
    path: str | None


def task(returns=None, **directions):
    """Marks a module-level function as a task; `returns` a type (or 1) if it returns a value, and each parameter
    named as IN (the default) or INOUT."""
    if returns is not None and not (isinstance(returns, type) or (type(returns) is int and returns == 1)):
        raise InvalidArgumentError(f"@task returns must be a type or 1 (one return value), not {returns!r}")
    wrong = {name: d for name, d in directions.items() if d not in (IN, INOUT)}
    if wrong:
        raise InvalidArgumentError(f"@task parameter directions must be IN or INOUT, not {wrong}")

    def decorate(function):
        if not inspect.isfunction(function) or function.__qualname__ != function.__name__:
            raise InvalidArgumentError(f"@task decorates module-level functions (workers import them by name), "
                                       f"not {getattr(function, '__qualname__', function)!r}")
        signature = inspect.signature(function)
        for name in directions:
            parameter = signature.parameters.get(name)
            if parameter is None or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                raise InvalidArgumentError(f"@task of {function.__name__}: {name!r} is not a named parameter of it")
        path = getattr(sys.modules.get(function.__module__), "__file__", None)
        spec = TaskSpec(function, function.__name__, signature, dict(directions), returns,
                        os.path.abspath(path) if path else None)

        @functools.wraps(function)
        def call(*args, **kwargs):
            runtime = _running
            if runtime is None:
                return function(*args, **kwargs)
            if function.__module__ == "__main__" and spec.path is None:
                raise InvalidArgumentError(f"task {spec.name} is defined in an interactive session: workers "
                                           f"cannot import it; define it in a script or module")
            return runtime.scheduler.submit(spec, args, kwargs)

        call.is_local_task = True
        return call

    return decorate


def compss_wait_on(*values):
    """The values of Futures, and persistent objects with their written versions consolidated (one value for one
    argument, else a list); without a started runtime the values as they are."""
    runtime = _running
    waited = [runtime.scheduler.wait_on(v) if runtime is not None else v for v in values]
    return waited[0] if len(values) == 1 else waited


def compss_barrier(no_more_tasks: bool = False) -> None:
    """Waits for every task submitted so far and consolidates the last version of every written object."""
    runtime = _running
    if runtime is not None:
        runtime.scheduler.barrier()


class LocalRuntime:
    """`workers` forked worker processes running @task calls through storage.api; use it as a context manager."""

    def __init__(self, workers: int = 2, config_file=None, start_timeout: float = 120.0, stop_timeout: float = 60.0):
        if type(workers) is not int or workers < 1:
            raise InvalidArgumentError(f"workers must be a positive integer, not {workers!r}")
        if config_file is not None:
            config_file = os.path.abspath(os.fspath(config_file))
        self.workers = workers
        self.config_file = config_file
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.scheduler = None
        self._pool = None

    @property
    def executor_pids(self) -> list:
        """Process IDs of the forked executors (empty before start)."""
        return list(self._pool.executor_pids) if self._pool is not None else []

    @property
    def worker_pid(self):
        """Process ID of the worker process the executors are forked from (None before start)."""
        return self._pool.process.pid if self._pool is not None else None

    def start(self) -> "LocalRuntime":
        """storage.api.init() here (the COMPSs master's part), then the worker process and its executors."""
        global _running
        with _lock:
            if _running is not None:
                raise RuntimeError("a local COMPSs runtime is already running in this process")
            api.init(config_file_path=self.config_file)
            try:
                self._pool = WorkerPool(self.workers, self.config_file, self.start_timeout)
            except BaseException:
                api.finish()
                raise
            self.scheduler = Scheduler(self._pool)
            _running = self
        return self

    def stop(self, wait: bool = True) -> None:
        """Waits for the tasks and consolidates (unless `wait` is False), then ends the workers and finish()es."""
        global _running
        if _running is not self:
            raise RuntimeError("stop() of a local runtime that is not running")
        try:
            if wait:
                self.scheduler.barrier()
        finally:
            _running = None
            self.scheduler.close()
            self._pool.stop(self.stop_timeout)
            self.scheduler.join(self.stop_timeout)
            api.finish()

    def __enter__(self) -> "LocalRuntime":
        return self.start()

    def __exit__(self, exc_type, exc, tb) -> None:
        self.stop(wait=exc_type is None)
