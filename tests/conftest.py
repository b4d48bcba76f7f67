"""Fixtures that start real servers: PostgreSQL and whole local dataClay clusters."""
import pytest

from harness.cluster import Cluster
from harness.postgres import PostgresServer


@pytest.fixture(scope="session")
def postgres():
    """One real PostgreSQL server for the whole run."""
    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture
def make_cluster():
    """Starts clusters on demand (models registered) and always stops them."""
    started = []

    def start(**options) -> Cluster:
        cluster = Cluster(**options)
        started.append(cluster)
        cluster.start()
        cluster.register_models()
        return cluster

    yield start
    for cluster in started:
        cluster.stop()


@pytest.fixture
def cluster(make_cluster):
    """A two-backend kv cluster with the test models registered."""
    return make_cluster()
