"""dataClay 4's event-loop helpers, for its programs and models: `run_dc_coroutine` runs an async
function to its end from synchronous code (a model method, a script), on an event loop of
dataClay's own in a background thread; `dc_to_thread_cpu` and `dc_to_thread_io` run a blocking
function from a coroutine without blocking its loop."""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import os
import threading
from typing import Any, Awaitable, Callable

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
_cpu_bound = concurrent.futures.ThreadPoolExecutor(max_workers=_CPUS, thread_name_prefix="dataclay-cpu")
_io_bound = concurrent.futures.ThreadPoolExecutor(max_workers=_CPUS * 8, thread_name_prefix="dataclay-io")


def set_dc_event_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Makes `loop` (running in a thread of the caller's) the one run_dc_coroutine uses."""
    global _loop
    with _lock:
        _loop = loop


def get_dc_event_loop() -> asyncio.AbstractEventLoop:
    """The loop run_dc_coroutine uses; started in a daemon thread at first use unless one was set."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            started = threading.Event()
            threading.Thread(target=_run, args=(loop, started), name="dataclay-event-loop", daemon=True).start()
            started.wait()
            _loop = loop
        return _loop


def run_dc_coroutine(func: Callable[..., Awaitable], *args, **kwargs) -> Any:
    """`await func(*args, **kwargs)` from synchronous code: returns its result, raises its error."""
    loop = get_dc_event_loop()
    if _on_loop_thread(loop):
        raise RuntimeError("run_dc_coroutine() was called on dataClay's event loop itself, where it would wait "
                           f"for ever: await {getattr(func, '__name__', 'the coroutine')}(...) there instead")
    return asyncio.run_coroutine_threadsafe(func(*args, **kwargs), loop).result()


async def dc_to_thread_cpu(func: Callable, /, *args, **kwargs) -> Any:
    """Runs a CPU-bound blocking `func` in a thread (as many as this process's CPUs) and awaits it."""
    return await _to_thread(func, _cpu_bound, *args, **kwargs)


async def dc_to_thread_io(func: Callable, /, *args, **kwargs) -> Any:
    """Runs an I/O-bound blocking `func` in a thread (eight per CPU) and awaits it."""
    return await _to_thread(func, _io_bound, *args, **kwargs)


async def _to_thread(func, executor, *args, **kwargs):
    # the caller's context variables go along, as with asyncio.to_thread
    call = functools.partial(contextvars.copy_context().run, func, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(executor, call)


def _run(loop: asyncio.AbstractEventLoop, started: threading.Event) -> None:
    asyncio.set_event_loop(loop)
    loop.call_soon(started.set)
    loop.run_forever()


def _on_loop_thread(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
