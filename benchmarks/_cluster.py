"""What the Python benchmarks share: a real local cluster (the test harness's) and percentiles."""
from __future__ import annotations

import contextlib
import os
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from harness.cluster import Cluster  # noqa: E402

__all__ = ["REPO", "Cluster", "connected_cluster", "p50_p99"]


def p50_p99(samples: list[float]) -> tuple[float, float]:
    """The median and the 99th percentile of `samples`."""
    ordered = sorted(samples)
    return ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


@contextlib.contextmanager
def connected_cluster(backends: int, store: str, store_size: str, java_opts: str | None = None, tls: bool = False):
    """A started cluster with the test models registered, and this process connected to it
    (api.init with the cluster's environment, the models importable); stopped on leaving.
    `java_opts` (by default DATACLAY_JAVA_OPTS, since the test harness passes no DATACLAY_*
    variable on) goes to the server JVMs, e.g. -Xmx8g; `tls` starts it with --tls."""
    if java_opts is None:
        java_opts = os.environ.get("DATACLAY_JAVA_OPTS")
    cluster = Cluster(backends=backends, store=store, store_size=store_size,
                      extra_env={"DATACLAY_JAVA_OPTS": java_opts} if java_opts else None, tls=tls)
    try:
        cluster.start()
        cluster.register_models()
        os.environ.update(cluster.env)
        sys.path.insert(0, str(REPO / "tests" / "models"))
        from dataclay import api
        api.init()
        try:
            yield cluster
        finally:
            api.finish()
    finally:
        cluster.stop()
