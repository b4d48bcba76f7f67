"""Progress bars on standard error for long command-line work, drawn by tqdm: a bar with a rate
and an estimated time left, redrawn in place on a terminal. Elsewhere (a pipe, a batch job's log)
nothing is shown, unless asked for (`dataclay export --progress`): then one line every few
seconds."""
from __future__ import annotations

import contextlib
import os
import sys
import threading

from tqdm import tqdm


class _Lines:
    """A stream that gets each redraw tqdm makes ("\\r" + the line) as a line of its own."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> None:
        for part in text.split("\r"):
            line = part.rstrip("\n")
            if line.strip():
                self._stream.write(line + "\n")

    def flush(self) -> None:
        self._stream.flush()


def bar(label: str, total: float | None = None, unit: str = "it", enabled: bool | None = None, stream=None,
        **options) -> tqdm:
    """A tqdm bar on `stream` (standard error); `enabled` None: only when that is a terminal. Use it
    as a context manager; `update(n)` counts work done (tqdm locks: any thread may)."""
    stream = stream or sys.stderr
    tty = hasattr(stream, "isatty") and stream.isatty()
    shown = tty if enabled is None else enabled
    # follow the terminal's size; one that reports none (a bare pseudo-terminal: 0 x 0, where tqdm
    # would draw nothing) gets 100 columns and 24 rows
    follow = tty and min(_size(stream)) > 0
    return tqdm(total=total, desc=label, unit=unit, file=stream if tty else _Lines(stream), disable=not shown,
                mininterval=0.2 if tty else 5.0, dynamic_ncols=follow, ncols=None if follow else 100,
                nrows=None if follow else 24, leave=True, **options)


def _size(stream) -> tuple[int, int]:
    try:
        size = os.get_terminal_size(stream.fileno())
        return size.columns, size.lines
    except (AttributeError, OSError, ValueError):
        return 0, 0


@contextlib.contextmanager
def waiting(label: str, enabled: bool | None = None, stream=None):
    """`label` and the time elapsed, redrawn every half second while the block runs: for one call
    that may take long (a collection on the Logic Module, a model deployed to every backend).
    Nothing when standard error is not a terminal."""
    shown = bar(label, enabled=enabled, stream=stream, bar_format="{desc}: {elapsed}")
    stop = threading.Event()

    def redraw() -> None:
        while not stop.wait(0.5):
            shown.refresh()

    ticker = threading.Thread(target=redraw, name="progress", daemon=True)
    if not shown.disable:
        ticker.start()
    try:
        yield shown
    finally:
        stop.set()
        if ticker.is_alive():
            ticker.join()
        shown.close()


class Progress:
    """Counts bytes and objects done (from any thread) against optional totals, on a `bar` in bytes
    with the objects beside it. `about`: the byte total is an estimate."""

    def __init__(self, label: str, total_bytes: int | None = None, total_objects: int | None = None,
                 enabled: bool | None = None, stream=None, about: bool = False):
        self._bar = bar(label + (" (about)" if about and total_bytes else ""), total=total_bytes or None, unit="B",
                        enabled=enabled, stream=stream, unit_scale=True, unit_divisor=1000)
        self.enabled = not self._bar.disable
        self._total_objects = None if about else total_objects
        self._bytes = 0
        self._objects = 0
        self._lock = threading.Lock()

    def add(self, nbytes: int = 0, objects: int = 0) -> None:
        """Counts work done; tqdm redraws when it is time."""
        with self._lock:
            self._bytes += nbytes
            if objects:
                self._objects += objects
                of = f"/{self._total_objects:,}" if self._total_objects else ""
                self._bar.set_postfix_str(f"{self._objects:,}{of} objects", refresh=False)
            self._bar.update(nbytes)

    def done(self) -> None:
        """Draws the final state and ends the line."""
        with self._lock:
            self._bar.close()

    @property
    def bytes(self) -> int:
        return self._bytes
