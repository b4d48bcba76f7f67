"""A progress line on standard error for long exports and imports: redrawn in place on a terminal,
printed every few seconds when asked for elsewhere (a batch job's log), silent otherwise."""
from __future__ import annotations

import sys
import threading
import time

_WIDTH = 24


class Progress:
    """Counts bytes and objects done (from any thread) against optional totals, and shows them.
    `enabled` None: only when standard error is a terminal."""

    def __init__(self, label: str, total_bytes: int | None = None, total_objects: int | None = None,
                 enabled: bool | None = None, stream=None, about: bool = False):
        self._stream = stream or sys.stderr
        self._tty = hasattr(self._stream, "isatty") and self._stream.isatty()
        self.enabled = self._tty if enabled is None else enabled
        self._label = label
        self._total_bytes = total_bytes
        self._total_objects = total_objects
        self._about = about
        self._bytes = 0
        self._objects = 0
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._shown = 0.0
        self._period = 0.2 if self._tty else 5.0

    def add(self, nbytes: int = 0, objects: int = 0) -> None:
        """Counts work done; redraws when it is time."""
        with self._lock:
            self._bytes += nbytes
            self._objects += objects
            now = time.monotonic()
            if self.enabled and now - self._shown >= self._period:
                self._shown = now
                self._show(now, final=False)

    def done(self) -> None:
        """Draws the final state and ends the line."""
        with self._lock:
            if self.enabled:
                self._show(time.monotonic(), final=True)

    @property
    def bytes(self) -> int:
        return self._bytes

    def _show(self, now: float, final: bool) -> None:
        elapsed = max(now - self._started, 1e-6)
        parts = [self._label]
        if self._total_bytes:
            fraction = min(self._bytes / self._total_bytes, 1.0 if final else 0.99)
            filled = int(fraction * _WIDTH)
            parts.append(f"[{'#' * filled}{'.' * (_WIDTH - filled)}] {fraction * 100:3.0f}%")
            parts.append(f"{_mb(self._bytes)}/{'about ' if self._about else ''}{_mb(self._total_bytes)} MB")
        else:
            parts.append(f"{_mb(self._bytes)} MB")
        if self._objects or self._total_objects:
            of = f"/{self._total_objects:,}" if self._total_objects and not self._about else ""
            parts.append(f"{self._objects:,}{of} objects")
        parts.append(f"{self._bytes / elapsed / 1e6:.1f} MB/s")
        line = "  ".join(parts)
        if self._tty:
            self._stream.write("\r" + line + ("\n" if final else ""))
        else:
            self._stream.write(line + "\n")
        self._stream.flush()


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f}"
