"""The local runtime's worker process, `python -m storage._worker CONFIG FD...`, shaped like a COMPSs
Python worker: storage.api.initWorker() here (configuration only), then one executor forked per
task channel FD. Each executor calls initWorkerPostFork(), says it is ready, runs the tasks it is
sent (an INOUT persistent parameter is first renamed with newVersion, and the task gets the
version; every persistent parameter arrives as an ID and is opened with getByID; the function runs
inside TaskContext) and calls finishWorkerPostFork() when told to stop or when the master is gone.
finishWorker() runs last, once every executor has ended."""
from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import pickle
import socket
import sys
import traceback

from dataclay import DataClayObject
from storage import _wire, api

_log = logging.getLogger("storage.local_runtime.executor")
_MAIN_ALIAS = "__compss_main__"
_main_modules: dict = {}


def main(argv: list[str]) -> int:
    """Runs the worker: initWorker, fork the executors, wait for them, finishWorker; 0 if all ended well."""
    config = argv[0] or None
    fds = [int(fd) for fd in argv[1:]]
    api.initWorker(config_file_path=config)
    children = []
    for fd in fds:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _exit_child(fd, fds)
        children.append(pid)
    for fd in fds:
        os.close(fd)
    failed = 0
    for pid in children:
        _, status = os.waitpid(pid, 0)
        failed += os.waitstatus_to_exitcode(status) != 0
    api.finishWorker()
    return 1 if failed else 0


def _exit_child(fd: int, fds: list[int]) -> None:
    """The executor's whole life; it never returns into the parent's fork loop."""
    code = 1
    try:
        for other in fds:
            if other != fd:
                os.close(other)
        code = _executor(socket.socket(fileno=fd))
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _executor(sock: socket.socket) -> int:
    try:
        api.initWorkerPostFork()
    except Exception as e:
        _wire.send(sock, ("failed", os.getpid(), f"initWorkerPostFork: {type(e).__name__}: {e}"))
        return 1
    try:
        _wire.send(sock, ("ready", os.getpid()))
        while True:
            try:
                message = _wire.recv(sock)
            except _wire.ChannelClosed:
                break  # the master ended without saying so: nothing more will come
            if message is None:
                break
            _wire.send(sock, _run(message))
    finally:
        api.finishWorkerPostFork()
    return 0


def _run(message: dict) -> tuple:
    """Runs one task; ("done", id, result, versions) or ("error", id, type name, message, traceback)."""
    versions: dict = {}
    try:
        function = _function(message["module"], message["path"], message["name"])
        args = [_parameter(spec, versions) for spec in message["args"]]
        kwargs = {name: _parameter(spec, versions) for name, spec in message["kwargs"].items()}
        with api.TaskContext(_log, [*args, *kwargs.values()]):
            result = function(*args, **kwargs)
        return "done", message["task"], _result(result), versions
    except Exception as e:
        kind = type(e)
        return "error", message["task"], f"{kind.__module__}.{kind.__qualname__}", str(e), traceback.format_exc()


def _parameter(spec: tuple, versions: dict):
    kind = spec[0]
    if kind == "value":
        return pickle.loads(spec[1])
    if kind == "object":
        return api.getByID(spec[1])
    _, root, source = spec  # "inout": the task works on a new version, as COMPSs renames written data
    version = api.newVersion(source, preserve_source=True)
    versions[root] = version
    return api.getByID(version)


def _result(value) -> tuple:
    if isinstance(value, DataClayObject) and value.is_persistent:
        return "object", value.getID()
    return "value", pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def _function(module: str, path: str | None, name: str):
    """The undecorated function of task `name`; the application's main script is loaded by path under another
    name, so its `if __name__ == "__main__":` part does not run here."""
    if module == "__main__":
        loaded = _main_modules.get(path)
        if loaded is None:
            spec = importlib.util.spec_from_file_location(_MAIN_ALIAS, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load the application script {path!r}")
            loaded = importlib.util.module_from_spec(spec)
            sys.modules[_MAIN_ALIAS] = loaded
            spec.loader.exec_module(loaded)
            _main_modules[path] = loaded
    else:
        loaded = importlib.import_module(module)
    task = getattr(loaded, name, None)
    function = getattr(task, "__wrapped__", None)
    if function is None or not getattr(task, "is_local_task", False):
        raise LookupError(f"{module}.{name} is not a @task function in the worker's copy of the module")
    return function


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
