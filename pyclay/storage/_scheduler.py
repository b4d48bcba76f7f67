"""The local runtime's master side: the task graph and one dispatching thread per executor.

Dependencies are COMPSs': a task waits for the tasks whose results it takes and for the last writer
of every persistent object it takes. Writers do not wait for earlier readers: an INOUT parameter is
renamed (the executor calls storage.api.newVersion on the version the task must see, and the task
works on the new version), so a reader keeps the version it was submitted against. The final version
of each written object is consolidated into the original (storage.api.consolidateVersion) at
compss_barrier, at compss_wait_on of that object and when the runtime stops."""
from __future__ import annotations

import inspect
import itertools
import pickle
import threading

from dataclay import DataClayObject
from dataclay.exceptions import DataClayException, InvalidArgumentError
from storage import _wire, api

IN = "IN"
INOUT = "INOUT"


class TaskFailedError(DataClayException, RuntimeError):
    """A task raised (or its worker ended) in a worker process; the message holds the remote traceback."""


class Future:
    """The result of a task: pass it to other tasks, or get its value with compss_wait_on()."""

    __slots__ = ("_task",)

    def __init__(self, task):
        self._task = task

    def __reduce__(self):
        raise TypeError("a task's Future can only be a direct argument of another task or given to compss_wait_on()")


class _Task:
    __slots__ = ("id", "spec", "args", "kwargs", "deps", "users", "finished", "result", "versions", "error")

    def __init__(self, task_id: int, spec):
        self.id, self.spec = task_id, spec
        self.args, self.kwargs = [], {}
        self.deps, self.users = set(), []
        self.finished, self.result, self.versions, self.error = False, None, {}, None

    def __repr__(self) -> str:
        return f"task {self.spec.name} #{self.id}"


class Scheduler:
    """Runs submitted tasks on the pool's executors, in dependency order."""

    def __init__(self, pool):
        self._cond = threading.Condition()
        self._ids = itertools.count(1)
        self._queue: list[_Task] = []
        self._open = 0
        self._last_writer: dict[str, _Task] = {}
        self._users: dict[str, set] = {}
        self._failed: list[_Task] = []
        self._live = len(pool.channels)
        self._closing = False
        self._threads = [threading.Thread(target=self._serve, args=(channel,), name=f"executor-{i}", daemon=True)
                         for i, channel in enumerate(pool.channels)]
        for thread in self._threads:
            thread.start()

    # ---- submitting ------------------------------------------------------------------------------

    def submit(self, spec, args: tuple, kwargs: dict):
        """Queues a call of task `spec`; a Future if the task declares a return value, else None."""
        bound = spec.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        with self._cond:
            if self._closing:
                raise RuntimeError(f"{spec.name}() called after the local runtime stopped")
            task = _Task(next(self._ids), spec)
            inout = []
            for name, value in bound.arguments.items():
                kind = spec.signature.parameters[name].kind
                if kind is inspect.Parameter.VAR_POSITIONAL:
                    task.args.extend(self._parameter(task, name, v, IN, inout) for v in value)
                elif kind is inspect.Parameter.VAR_KEYWORD:
                    task.kwargs.update({k: self._parameter(task, k, v, IN, inout) for k, v in value.items()})
                elif kind is inspect.Parameter.KEYWORD_ONLY:
                    task.kwargs[name] = self._parameter(task, name, value, spec.directions.get(name, IN), inout)
                else:
                    task.args.append(self._parameter(task, name, value, spec.directions.get(name, IN), inout))
            # Recorded only now that every parameter was accepted: a refused call leaves no trace.
            for root in task.users:
                self._users.setdefault(root, set()).add(task)
            for root in inout:
                self._last_writer[root] = task
            self._queue.append(task)
            self._open += 1
            self._cond.notify_all()
        return Future(task) if spec.returns else None

    def _parameter(self, task: _Task, name: str, value, direction: str, inout: list) -> tuple:
        if isinstance(value, Future):
            if direction == INOUT:
                raise InvalidArgumentError(f"{task}: INOUT parameter {name!r} must be a persistent object, not "
                                           f"a Future (pass it to compss_wait_on() first)")
            task.deps.add(value._task)
            return ("future", value._task)
        if isinstance(value, DataClayObject) and value.is_persistent:
            root = value.getID()
            writer = self._last_writer.get(root)
            if writer is not None:
                task.deps.add(writer)
            task.users.append(root)
            if direction == INOUT:
                if root in inout:
                    raise InvalidArgumentError(f"{task}: object {root} is passed twice as INOUT")
                inout.append(root)
                return ("inout", root, writer)
            return ("object", root, writer)
        if direction == INOUT:
            raise InvalidArgumentError(f"{task}: INOUT parameter {name!r} must be a persistent object (the local "
                                       f"runtime renames persistent objects only), not a {type(value).__name__}")
        try:
            return ("value", pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        except Exception as e:
            raise InvalidArgumentError(f"{task}: parameter {name!r} cannot be sent to a worker: {e}") from None

    # ---- waiting ---------------------------------------------------------------------------------

    def wait_on(self, value):
        """The value of a Future; a written persistent object once its tasks ended and its last version is
        consolidated; lists and tuples element by element; anything else as it is."""
        if isinstance(value, Future):
            task = value._task
            with self._cond:
                self._cond.wait_for(lambda: task.finished)
            if task.error is not None:
                raise task.error
            kind, payload = task.result
            return api.getByID(payload) if kind == "object" else pickle.loads(payload)
        if isinstance(value, DataClayObject) and value.is_persistent:
            root = value.getID()
            with self._cond:
                self._cond.wait_for(lambda: not self._users.get(root))
                writer = self._last_writer.pop(root, None)
            if writer is not None:
                self._consolidate(root, writer)
            return value
        if isinstance(value, (list, tuple)):
            return type(value)(self.wait_on(v) for v in value)
        return value

    def barrier(self) -> None:
        """Waits for every task, consolidates every written object; TaskFailedError if a task failed since the
        last barrier (after consolidating the objects whose last writer succeeded)."""
        with self._cond:
            self._cond.wait_for(lambda: self._open == 0)
            written, self._last_writer = self._last_writer, {}
            failed, self._failed = self._failed, []
        for root, writer in written.items():
            if writer.error is None:
                self._consolidate(root, writer)
        if failed:
            raise TaskFailedError(f"{len(failed)} task(s) failed; the first: {failed[0].error}")

    def close(self) -> None:
        """Stops dispatching: queued tasks fail, idle dispatchers end (a busy one ends with its executor)."""
        with self._cond:
            self._closing = True
            for task in list(self._queue):
                self._finish(task, error=TaskFailedError(f"{task} never ran: the local runtime stopped"))
            self._queue.clear()
            self._cond.notify_all()

    def join(self, timeout: float) -> None:
        """Waits up to `timeout` s for each dispatcher to end (after close() and the pool's stop)."""
        for thread in self._threads:
            thread.join(timeout)

    @staticmethod
    def _consolidate(root: str, writer: _Task) -> None:
        # The one place an original changes. If the program dies before it, the original keeps the state it
        # had before the tasks (all their work sits in versions nothing references, left to garbage
        # collection): never a mix, because the tasks never touched it and consolidation writes it in one update.
        if writer.error is not None:
            raise TaskFailedError(f"object {root} was not consolidated: its last writer failed: {writer.error}")
        api.consolidateVersion(writer.versions[root])

    # ---- dispatching (one thread per executor) ---------------------------------------------------

    def _serve(self, channel) -> None:
        while True:
            with self._cond:
                task = self._next_ready()
                if task is None:
                    return
                message = self._message(task)
            try:
                _wire.send(channel, message)
                reply = _wire.recv(channel)
            except (OSError, _wire.ChannelClosed) as e:
                with self._cond:
                    self._finish(task, error=TaskFailedError(f"{task} lost its worker executor: {e}"))
                    self._live -= 1
                    if self._live == 0:
                        for queued in list(self._queue):
                            self._finish(queued, error=TaskFailedError(f"{queued} never ran: no worker executor "
                                                                       f"is left"))
                        self._queue.clear()
                    self._cond.notify_all()
                return
            with self._cond:
                if reply[0] == "done":
                    task.result, task.versions = reply[2], reply[3]
                    self._finish(task)
                else:
                    self._finish(task, error=TaskFailedError(f"{task} raised {reply[2]}: {reply[3]}\n"
                                                             f"--- in the worker:\n{reply[4]}"))
                self._cond.notify_all()

    def _next_ready(self):
        """The first queued task whose dependencies ended (failing those whose dependencies failed); None once
        closing. Called with the condition held; waits on it."""
        while not self._closing:
            for task in list(self._queue):
                if not all(dep.finished for dep in task.deps):
                    continue
                self._queue.remove(task)
                failed = next((dep for dep in task.deps if dep.error is not None), None)
                if failed is None:
                    return task
                self._finish(task, error=TaskFailedError(f"{task} did not run: {failed} failed ({failed.error})"))
                self._cond.notify_all()
            self._cond.wait()
        return None

    def _message(self, task: _Task) -> dict:
        fn = task.spec.function
        return {"task": task.id, "module": fn.__module__, "path": task.spec.path, "name": fn.__name__,
                "args": [self._concrete(p) for p in task.args],
                "kwargs": {k: self._concrete(p) for k, p in task.kwargs.items()}}

    @staticmethod
    def _concrete(parameter: tuple) -> tuple:
        """The parameter as the executor gets it: a value, an object ID, or ("inout", object, version to copy)."""
        kind = parameter[0]
        if kind == "value":
            return parameter
        if kind == "future":
            return parameter[1].result
        root, writer = parameter[1], parameter[2]
        seen = writer.versions[root] if writer is not None else root
        return ("object", seen) if kind == "object" else ("inout", root, seen)

    def _finish(self, task: _Task, error: Exception | None = None) -> None:
        task.finished, task.error = True, error
        self._open -= 1
        if error is not None:
            self._failed.append(task)
        for root in task.users:
            users = self._users.get(root)
            if users is not None:
                users.discard(task)
                if not users:
                    del self._users[root]
