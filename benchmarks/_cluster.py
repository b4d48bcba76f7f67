"""What the Python benchmarks share: a real local cluster (the test harness's) and percentiles."""
from __future__ import annotations

import contextlib
import os
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from harness.cluster import Cluster  # noqa: E402
from _timing import p50_p99  # noqa: E402  (re-exported: the benchmarks take it from here)

__all__ = ["REPO", "Cluster", "Side", "connected_cluster", "models_importable", "p50_p99"]

# The server settings a benchmark's caller may set in its own environment, handed to the clusters
# it starts (the test harness passes no DATACLAY_* variable on): JVM options, placement, the warm-up
# pass, the environment's thread count, the call port (`off`: clients use gRPC) and the heartbeat.
PASSED_ON = ("DATACLAY_JAVA_OPTS", "DATACLAY_CPUS", "DATACLAY_WARMUP", "DATACLAY_EE_THREADS", "DATACLAY_CALL_PORT",
             "DATACLAY_HEARTBEAT_MS")

# The test harness's settings a benchmark puts back to what a user's cluster runs: its backends
# heartbeat every 200 ms (its tests wait on liveness), five times as often as the default, and the
# heartbeats are part of the background a call's tail waits behind.
SHIPPED = {"DATACLAY_HEARTBEAT_MS": "1000"}


def _passed_on() -> dict:
    return {**SHIPPED, **{key: os.environ[key] for key in PASSED_ON if os.environ.get(key)}}


@contextlib.contextmanager
def connected_cluster(backends: int, store: str, store_size: str, java_opts: str | None = None, tls: bool = False):
    """A started cluster with the test models registered, and this process connected to it
    (api.init with the cluster's environment, the models importable); stopped on leaving.
    `java_opts` (by default DATACLAY_JAVA_OPTS) goes to the server JVMs, e.g. -Xmx8g,
    DATACLAY_CPUS places the backends as it says, DATACLAY_WARMUP warms them up at start; `tls`
    starts it with --tls."""
    env = _passed_on()
    if java_opts is not None:
        env["DATACLAY_JAVA_OPTS"] = java_opts
    cluster = Cluster(backends=backends, store=store, store_size=store_size, extra_env=env, tls=tls)
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


def models_importable() -> None:
    """Makes the test models (tests/models) importable here and in every process started from here,
    and prints the load average (what the figures that follow ran beside)."""
    sys.path.insert(0, str(REPO / "tests" / "models"))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "tests" / "models"),
                                                             os.environ.get("PYTHONPATH")]))
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


class Side:
    """One of several clusters a benchmark measures side by side from this process: one backend,
    `kv` on /dev/shm, the test models registered, a stored Counter, and a client runtime of this
    process connected to it (`with side.active():` makes it the process's for a block)."""

    def __init__(self, name: str, extra_env: dict | None = None, tls: bool = False):
        self.name = name
        env = {**_passed_on(), **(extra_env or {})}
        self.cluster = Cluster(backends=1, store="kv", store_size="1G", extra_env=env, tls=tls)

    def start(self) -> "Side":
        from dataclay._internal.config import Config
        from dataclay._internal.rpc import LogicModuleClient
        from dataclay._internal.runtime.client import ClientRuntime
        self.cluster.start()
        self.cluster.register_models()
        self.config = Config.load(env=self.cluster.env)
        self.runtime = ClientRuntime(self.config).open()
        self.lm = LogicModuleClient(self.config.lm_address, tls=self.config.tls)
        with self.active():
            from people.model import Counter
            self.counter = Counter(0)
            self.counter.make_persistent()
        return self

    def active(self):
        """Makes this side's runtime the process's while the block runs."""
        from dataclay._internal.runtime import current
        side = self

        class _Active:
            def __enter__(self):
                assert current.install_runtime(side.runtime)

            def __exit__(self, *exc):
                current.remove_runtime(side.runtime)

        return _Active()

    def stop(self) -> None:
        for closing in (getattr(self, "lm", None), getattr(self, "runtime", None)):
            if closing is not None:
                closing.close()
        self.cluster.stop()
