"""What model code prints and logs in an execution environment becomes lines of the backend's log
that say which call wrote them: `call <module.Class>.<method> on <object ID>: stdout: <text>`. The
Data Service leads each line with the account this process serves (which model code cannot change)
and bounds how much it takes; here every printed line becomes one log line, with its control
characters escaped, and a log record's newlines (a traceback's) are escaped so it stays one line."""
from __future__ import annotations

import io
import logging
import sys
import threading

from dataclay._internal.ee.call_context import current_call
from dataclay._internal.log_lines import escape_controls

MAX_LINE = 4096  # characters of a printed line kept together; a longer one is written in pieces
_lock = threading.Lock()


def call_label() -> str:
    """"call module.Class.method on <object ID>: " while this thread serves a call, else ""."""
    call = current_call()
    return f"call {call.what}: " if call is not None and call.what else ""


class CallOutput(io.TextIOBase):
    """A text stream (sys.stdout or sys.stderr of model code) whose lines go to `sink` labelled with the
    call the writing thread serves and the stream's name. A line is written when it ends, when it grows
    past MAX_LINE, or on flush(); each thread keeps its own unfinished line."""

    def __init__(self, name: str, sink):
        super().__init__()
        self._name = name
        self._sink = sink
        self._pending = threading.local()
        self._bytes = _BytesInto(self)

    @property
    def buffer(self) -> io.RawIOBase:
        """The binary side (sys.stdout.buffer.write(b"...")): bytes are decoded as UTF-8 and written as text."""
        return self._bytes

    @property
    def encoding(self) -> str:
        return "utf-8"

    @property
    def errors(self) -> str:
        return "replace"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        pending = getattr(self._pending, "text", "") + text
        *lines, pending = pending.split("\n")
        while len(pending) > MAX_LINE:
            lines.append(pending[:MAX_LINE])
            pending = pending[MAX_LINE:]
        self._pending.text = pending
        if lines:
            self._emit(lines)
        return len(text)

    def flush(self) -> None:
        pending = getattr(self._pending, "text", "")
        if pending:
            self._pending.text = ""
            self._emit([pending])
        try:
            self._sink.flush()
        except (OSError, ValueError):
            pass

    def _emit(self, lines: list[str]) -> None:
        label = call_label()
        text = "".join(f"{label}{self._name}: {escape_controls(line)}\n" for line in lines)
        with _lock:
            try:
                self._sink.write(text)
                self._sink.flush()
            except (OSError, ValueError):
                pass  # the Data Service stopped reading: output has nowhere to go


class _BytesInto(io.RawIOBase):
    """Bytes written to a CallOutput's `buffer`: decoded (UTF-8, bad bytes replaced) and written as text."""

    def __init__(self, text: CallOutput):
        super().__init__()
        self._text = text

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        data = bytes(data)
        self._text.write(data.decode("utf-8", "replace"))
        return len(data)

    def flush(self) -> None:
        self._text.flush()


class CallFormatter(logging.Formatter):
    """Formats a record as one line: the call the logging thread serves (if any), level, logger and
    message, with the message's newlines (and an exception's traceback) escaped."""

    def __init__(self):
        super().__init__("%(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        return call_label() + escape_controls(super().format(record))


def capture() -> None:
    """Makes this process's print() and logging write labelled lines to its standard error (the
    Data Service's log): sys.stdout and sys.stderr become CallOutput streams, and the root logger's
    handlers format with CallFormatter. Call once, after the link took the standard streams."""
    sink = sys.__stderr__
    for handler in logging.getLogger().handlers:
        handler.setFormatter(CallFormatter())
    sys.stdout = CallOutput("stdout", sink)
    sys.stderr = CallOutput("stderr", sink)
