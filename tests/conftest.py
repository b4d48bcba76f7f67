"""Fixtures that start real servers: PostgreSQL and whole local dataClay clusters."""
import os
import sys
import uuid

import pytest

from dataclay._internal import engines as engine_view
from harness.cluster import MODELS, Cluster, started_with_models
from harness.hosts import HostNetwork, unavailable
from harness.multihost import MultiHostCluster
from harness.postgres import PostgresServer

sys.path.insert(0, str(MODELS))


@pytest.fixture(scope="session")
def postgres():
    """One real PostgreSQL server for the whole run."""
    server = PostgresServer().start()
    yield server
    server.stop()


def started_cluster(**options) -> Cluster:
    """A local cluster of `options`, started with the test models registered."""
    return started_with_models(Cluster(**options))


@pytest.fixture
def make_cluster():
    """Starts private clusters on demand (test models registered) and always stops them."""
    started = []

    def start(**options) -> Cluster:
        cluster = started_cluster(**options)
        started.append(cluster)
        return cluster

    yield start
    for cluster in started:
        cluster.stop()


ENGINES = engine_view.ENGINE_NAMES


def engines(durable_only: bool = False) -> list[str]:
    """The engines a parametrised test runs on: all, or those DATACLAY_TEST_ENGINES names."""
    chosen = [e for e in os.environ.get("DATACLAY_TEST_ENGINES", ",".join(ENGINES)).split(",") if e]
    unknown = set(chosen) - set(ENGINES)
    if unknown:
        raise ValueError(f"DATACLAY_TEST_ENGINES names unknown engines {sorted(unknown)}; valid: {ENGINES}")
    return [e for e in chosen if not (durable_only and not engine_view.engine(e).durable)]


def engine_options(request, engine: str, **extra_env) -> dict:
    """Cluster options for `engine`; one kept in a database (postgres) gets a fresh one on the session's server."""
    env = dict(extra_env)
    if engine_view.engine(engine).database:
        server = request.getfixturevalue("postgres")
        env["DATACLAY_STORE_URL"] = server.create_database(f"store_{uuid.uuid4().hex[:12]}")
    return {"store": engine, "extra_env": env}


@pytest.fixture
def hosts():
    """Makes networks of namespace hosts on demand (`hosts("node0", "node1")`) and always removes them,
    with every process on them; skips the test where this machine cannot make them."""
    reason = unavailable()
    if reason:
        pytest.skip(f"multi-host test: {reason}")
    made = []

    def make(*names: str) -> HostNetwork:
        network = HostNetwork(list(names)).start()
        made.append(network)
        return network

    yield make
    for network in reversed(made):
        network.close()


@pytest.fixture
def multihost(hosts):
    """Starts clusters over namespace hosts on demand (`multihost(network, "node0", ["node1"])`, test
    models registered) with the README's multi-node commands, and always stops them."""
    started = []

    def start(network: HostNetwork, lm_host: str, backend_hosts: list, **options) -> MultiHostCluster:
        cluster = MultiHostCluster(network, lm_host, backend_hosts, **options)
        started.append(cluster)
        cluster.start()
        cluster.register_models()
        return cluster

    yield start
    for cluster in reversed(started):
        cluster.stop()


@pytest.fixture(scope="module")
def cluster():
    """A two-backend kv cluster shared by the tests of one module (use distinct aliases)."""
    shared = started_cluster()
    yield shared
    shared.stop()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Under pytest-xdist (`--dist loadgroup`) the tests sharing a module-scoped fixture (a cluster,
    a built model) run in one worker, so that it is set up once and never twice at the same time."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        shared = sorted(name for name, defs in (info.name2fixturedefs.items() if info else ())
                        if defs and defs[-1].scope == "module")
        if shared:
            params = getattr(getattr(item, "callspec", None), "params", {})
            param = "-".join(str(params[name]) for name in shared if name in params)
            item.add_marker(pytest.mark.xdist_group(f"{item.module.__name__}-{param}"))