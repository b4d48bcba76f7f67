"""Calls per second with their p50 and p99 over the last minutes, for the dashboard's charts.

The servers do not keep a time series: each one answers GetStats or GetStatus with, per RPC, the
calls it started and the histogram of its ended calls' durations since it started (the same figures
it exports to Prometheus). A sampler asks every server every few seconds; the difference of two
samples gives the rate and the histogram of the calls that ended in between, whose percentiles are
interpolated inside their bucket as Prometheus' histogram_quantile() does. A server that restarted
(its counters went down) starts a new series instead of showing a negative rate."""
from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass

# Traffic that would drown the calls users make: backends' heartbeats, clients' waits for the
# cluster, and the monitoring's own questions (this sampler's, `dataclay status`'). Left out of
# every rate and percentile the charts show; the per-RPC tables still list them.
UNCHARTED = frozenset({"Heartbeat", "Health", "GetStats", "GetStatus"})


@dataclass(frozen=True)
class Histogram:
    """Ended calls by duration: `counts[i]` calls took at most `bounds[i]` seconds (and more than the
    bound before it); the last count is the calls beyond the last bound."""

    bounds: tuple
    counts: tuple

    @property
    def total(self) -> int:
        """Every call the histogram counts."""
        return sum(self.counts)

    def minus(self, earlier: "Histogram") -> "Histogram":
        """The calls counted here and not in `earlier` (same bounds); an empty histogram if the bounds differ."""
        if earlier.bounds != self.bounds:
            return Histogram(self.bounds, tuple(0 for _ in self.counts))
        return Histogram(self.bounds, tuple(max(0, a - b) for a, b in zip(self.counts, earlier.counts)))

    def plus(self, other: "Histogram") -> "Histogram":
        """Both histograms' calls (same bounds; `other` is ignored if its bounds differ)."""
        if not self.bounds:
            return other
        if other.bounds != self.bounds:
            return self
        return Histogram(self.bounds, tuple(a + b for a, b in zip(self.counts, other.counts)))

    def quantile(self, q: float) -> float | None:
        """The duration in seconds below which a fraction `q` of the calls ended, interpolated linearly
        inside its bucket; None without calls. Calls past the last bound count as the last bound."""
        total = self.total
        if total == 0:
            return None
        rank = q * total
        below = 0
        for i, count in enumerate(self.counts):
            if count and below + count >= rank:
                if i >= len(self.bounds):
                    return self.bounds[-1] if self.bounds else None
                lower = self.bounds[i - 1] if i > 0 else 0.0
                return lower + (self.bounds[i] - lower) * ((rank - below) / count)
            below += count
        return self.bounds[-1] if self.bounds else None


EMPTY = Histogram((), ())


def histogram_of(latency) -> Histogram:
    """The histogram a server reported for one RPC (a CallLatency message or anything shaped like it)."""
    return Histogram(tuple(latency.bounds_seconds), tuple(latency.counts))


@dataclass(frozen=True)
class Reading:
    """What one server said at one moment: its started calls and its ended calls' histogram, summed
    over every RPC except the UNCHARTED ones."""

    at: float
    started: int
    ended: Histogram


def reading_of(at: float, calls, latency) -> Reading:
    """A Reading from a server's `calls` (RPC -> started) and `latency` (RPC -> CallLatency) maps."""
    started = sum(n for rpc, n in calls.items() if rpc not in UNCHARTED)
    ended = EMPTY
    for rpc, figures in latency.items():
        if rpc not in UNCHARTED:
            ended = ended.plus(histogram_of(figures))
    return Reading(at, started, ended)


@dataclass(frozen=True)
class Point:
    """One chart point: the interval ending at `at` (epoch seconds), its calls per second and the
    p50 and p99 of the calls that ended in it, in milliseconds (None: no call ended)."""

    at: float
    rate: float
    p50_ms: float | None
    p99_ms: float | None
    ended: Histogram


def point_between(earlier: Reading, later: Reading) -> Point | None:
    """The point for the interval between two readings of one server; None if the server restarted
    in between (its counters went down) or no time passed."""
    seconds = later.at - earlier.at
    if seconds <= 0 or later.started < earlier.started or later.ended.total < earlier.ended.total:
        return None
    ended = later.ended.minus(earlier.ended)
    return Point(later.at, (later.started - earlier.started) / seconds, _ms(ended.quantile(0.5)),
                 _ms(ended.quantile(0.99)), ended)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000.0, 3)


class CallHistory:
    """The last `keep` points of every server, fed by `record` (thread-safe)."""

    def __init__(self, keep: int):
        self._keep = keep
        self._lock = threading.Lock()
        self._last: dict[str, Reading] = {}
        self._points: dict[str, deque] = {}

    def record(self, server: str, reading: Reading) -> None:
        """Adds a server's new reading; the point since its previous one joins its series."""
        with self._lock:
            previous = self._last.get(server)
            self._last[server] = reading
            point = point_between(previous, reading) if previous is not None else None
            if point is not None:
                self._points.setdefault(server, deque(maxlen=self._keep)).append(point)

    def series(self) -> dict:
        """Every server's points, oldest first, as JSON-ready dictionaries; plus "cluster": the sum
        over servers of each sampling round (its rate, and percentiles of all calls in it)."""
        with self._lock:
            copies = {server: list(points) for server, points in self._points.items()}
        out = {server: [_point_json(p) for p in points] for server, points in copies.items()}
        out["cluster"] = [_point_json(p) for p in _summed(copies)]
        return out


def _summed(series: dict) -> list:
    """Points of every server that fell in the same sampling round (same `at` to the second), added up."""
    rounds: dict[int, list] = {}
    for points in series.values():
        for p in points:
            rounds.setdefault(round(p.at), []).append(p)
    out = []
    for at in sorted(rounds):
        ended = EMPTY
        for p in rounds[at]:
            ended = ended.plus(p.ended)
        out.append(Point(float(at), sum(p.rate for p in rounds[at]), _ms(ended.quantile(0.5)),
                         _ms(ended.quantile(0.99)), ended))
    return out


def _point_json(p: Point) -> dict:
    return {"at": round(p.at, 3), "rate": round(p.rate, 3), "p50_ms": p.p50_ms, "p99_ms": p.p99_ms}


def now() -> float:
    """The sampler's clock: epoch seconds."""
    return time.time()
