"""The steps of a traced call inside the execution environment, timed on this process's clock.

The environment has no network to export spans. When the Data Service traces a call
(ExecuteRequest.traceparent set), the environment times its own steps and sends them back in the
result (ExecuteResult.spans); the Data Service records them as children of its span for the call.
Steps carry class and method names only: no argument, value, account, object ID or exception
message, since they leave the tenant's process for the cluster's collector."""
from __future__ import annotations

import time


class StepSpans:
    """The steps of one call: `open` one, `close` it; `records` lists them for the result frame."""

    __slots__ = ("_steps",)

    def __init__(self):
        self._steps: list = []

    def open(self, name: str, parent: int = 0, **attributes: str) -> int:
        """Starts a step now; returns its number (1-based), which a child step names as its parent."""
        self._steps.append([name, time.time_ns(), 0, attributes, "", parent])
        return len(self._steps)

    def close(self, number: int, error: BaseException | None = None) -> None:
        """Ends step `number` now; `error`: the step failed with it (only its type is kept)."""
        step = self._steps[number - 1]
        step[2] = time.time_ns()
        if error is not None:
            step[4] = type(error).__name__

    def records(self) -> list:
        """(name, start_unix_nano, end_unix_nano, attributes, error, parent) of every ended step."""
        return [tuple(step) for step in self._steps if step[2]]
