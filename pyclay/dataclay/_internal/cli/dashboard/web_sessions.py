"""The dashboard's browser sessions and its guard against password guessing.

A log-in opens a Logic Module session for the account (the same user and password as every other
client); the browser gets only a random cookie that names it here. The Logic Module's token never
reaches the browser, and closing the dashboard session closes the Logic Module's. A session ends
after `idle` seconds without a request, or when its Logic Module session expires, whichever is first."""
from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field

COOKIE = "dataclay_dashboard"
ENDED_KEPT = 1000     # timed-out cookies remembered, to tell their browsers why they must log in again


@dataclass
class BrowserSession:
    """One logged-in browser: its account and the Logic Module session the dashboard acts in."""

    user: str
    token: str
    expires_at: float          # the Logic Module session's end (epoch seconds)
    last_seen: float = field(default_factory=time.monotonic)


class SessionTable:
    """Open browser sessions by cookie value (thread-safe). `clock` is monotonic seconds, `wall` epoch
    seconds; both are settable for tests."""

    def __init__(self, idle: float, clock=time.monotonic, wall=time.time):
        self._idle = idle
        self._clock = clock
        self._wall = wall
        self._lock = threading.Lock()
        self._open: dict[str, BrowserSession] = {}
        # cookies of sessions that timed out, newest last, so a browser is told "expired" even after
        # the sampler cleared them away (bounded: the oldest are forgotten first)
        self._ended: OrderedDict[str, None] = OrderedDict()

    def open(self, user: str, token: str, expires_at_ms: int) -> str:
        """Registers a new session and returns its cookie value (256 random bits)."""
        cookie = secrets.token_urlsafe(32)
        expires = expires_at_ms / 1000.0 if expires_at_ms else float("inf")
        with self._lock:
            self._open[cookie] = BrowserSession(user, token, expires, self._clock())
        return cookie

    def find(self, cookie: str | None) -> tuple[BrowserSession | None, str]:
        """The live session a cookie names, touched; else None and why ("" without a cookie, "expired"
        for one that timed out, which is then forgotten, "unknown" otherwise)."""
        if not cookie:
            return None, ""
        with self._lock:
            session = self._open.get(cookie)
            if session is None:
                return None, "expired" if self._ended.pop(cookie, False) is None else "unknown"
            now = self._clock()
            if now - session.last_seen > self._idle or self._wall() >= session.expires_at:
                del self._open[cookie]
                return None, "expired"
            session.last_seen = now
            return session, ""

    def close(self, cookie: str | None) -> BrowserSession | None:
        """Forgets a session; returns it so its Logic Module session can be closed."""
        with self._lock:
            return self._open.pop(cookie, None) if cookie else None

    def tokens(self) -> list[str]:
        """The Logic Module tokens of the sessions still live, freshest first."""
        now, wall = self._clock(), self._wall()
        with self._lock:
            live = [s for s in self._open.values() if now - s.last_seen <= self._idle and wall < s.expires_at]
        return [s.token for s in sorted(live, key=lambda s: s.last_seen, reverse=True)]

    def expired(self) -> list[BrowserSession]:
        """Forgets and returns the sessions past their time (their Logic Module sessions are the caller's to close)."""
        now, wall = self._clock(), self._wall()
        with self._lock:
            gone = [c for c, s in self._open.items() if now - s.last_seen > self._idle or wall >= s.expires_at]
            for cookie in gone:
                self._ended[cookie] = None
            while len(self._ended) > ENDED_KEPT:
                self._ended.popitem(last=False)
            return [self._open.pop(c) for c in gone]


class LoginThrottle:
    """At most `attempts` failed log-ins per client address in any `window` seconds; past that, log-ins
    from the address are refused until the oldest failure leaves the window."""

    def __init__(self, attempts: int = 5, window: float = 60.0, clock=time.monotonic):
        self._attempts = attempts
        self._window = window
        self._clock = clock
        self._lock = threading.Lock()
        self._failures: dict[str, deque] = {}

    def wait(self, address: str) -> float:
        """Seconds before `address` may try again (0: now)."""
        now = self._clock()
        with self._lock:
            failures = self._failures.get(address)
            if not failures:
                return 0.0
            while failures and now - failures[0] >= self._window:
                failures.popleft()
            if not failures:
                del self._failures[address]
                return 0.0
            return self._window - (now - failures[0]) if len(failures) >= self._attempts else 0.0

    def failed(self, address: str) -> None:
        """Counts a failed log-in from `address`."""
        with self._lock:
            if len(self._failures) > 10_000:    # a flood of addresses: forget the oldest rather than grow
                self._failures.pop(next(iter(self._failures)))
            self._failures.setdefault(address, deque(maxlen=self._attempts)).append(self._clock())

    def succeeded(self, address: str) -> None:
        """Forgets `address`'s failures."""
        with self._lock:
            self._failures.pop(address, None)
