"""The thread that asks every server for its call figures every few seconds (call_history.py turns
them into the charts' points), and closes the Logic Module sessions of browsers that went away.

It acts in the dashboard's own session when the client configuration has an administrator's
credentials (as `dataclay status` does), so the charts fill while nobody looks; otherwise in the
session of the administrator who used the dashboard last, and not at all while nobody is logged in."""
from __future__ import annotations

import logging
import threading

from dataclay.exceptions import DataClayException, NotAuthenticatedError, PermissionDeniedError
from dataclay._internal.cli.dashboard.call_history import CallHistory, now, reading_of
from dataclay._internal.cli.dashboard.cluster_views import Cluster
from dataclay._internal.cli.dashboard.web_sessions import SessionTable

LOG = logging.getLogger("dataclay.dashboard")


class Sampler:
    """Samples the cluster every `every` seconds into `history` until stop()."""

    def __init__(self, cluster: Cluster, sessions: SessionTable, history: CallHistory, every: float,
                 credentials: tuple[str, str] | None = None):
        self._cluster = cluster
        self._sessions = sessions
        self._history = history
        self._every = every
        self._credentials = credentials
        self._own_token: str | None = None
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dashboard-sampler", daemon=True)

    def start(self) -> None:
        """Takes the first sample now, then one every `every` seconds."""
        self._thread.start()

    def stop(self) -> None:
        """Stops sampling and closes the dashboard's own session."""
        self._stopped.set()
        self._thread.join(timeout=self._every + 10)
        if self._own_token is not None:
            _close_quietly(self._cluster, self._own_token)

    def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                self.sample_once()
            except Exception:  # one bad round must not end the charts; the next round tries again
                LOG.exception("sampling the cluster failed")
            self._stopped.wait(self._every)

    def sample_once(self) -> bool:
        """One round over the Logic Module and every live backend; False if no session could ask."""
        for gone in self._sessions.expired():
            _close_quietly(self._cluster, gone.token)
        token = self._token()
        if token is None:
            return False
        at = now()
        lm = self._cluster.lm(token)
        try:
            stats = lm.get_stats()
            backends = lm.get_backends(timeout=self._cluster.timeout)
        except NotAuthenticatedError:
            if token == self._own_token:
                self._own_token = None        # it expired: the next round opens another
            return False
        except PermissionDeniedError as e:
            if token == self._own_token:
                LOG.warning("the dashboard's own session cannot read the cluster's figures (%s); it samples "
                            "in logged-in administrators' sessions instead", e)
                _close_quietly(self._cluster, token)
                self._own_token, self._credentials = None, None
            return False
        self._history.record("logicmodule", reading_of(at, stats.calls, stats.latency))
        for b in backends:
            if not b.alive:
                continue
            try:
                status = self._cluster.backend(f"{b.host}:{b.port}", token).get_status(timeout=self._cluster.timeout)
            except DataClayException as e:
                LOG.info("backend %s did not report its calls: %s", b.name, e)
                continue
            self._history.record(b.name or b.id, reading_of(at, status.calls, status.latency))
        return True

    def _token(self) -> str | None:
        if self._credentials is not None and self._own_token is None:
            user, password = self._credentials
            try:
                self._own_token = self._cluster.lm(None).new_session(user, password, "").token
            except DataClayException as e:
                LOG.warning("the dashboard could not log in as %s to sample the cluster (%s); it samples in "
                            "logged-in administrators' sessions instead", user, e)
                self._credentials = None
        if self._own_token is not None:
            return self._own_token
        tokens = self._sessions.tokens()
        return tokens[0] if tokens else None


def _close_quietly(cluster: Cluster, token: str) -> None:
    try:
        cluster.lm(token).close_session(timeout=5.0)
    except DataClayException as e:
        LOG.info("could not close a Logic Module session: %s", e)
