"""A real Prometheus scrapes a TLS cluster's metrics as an operator would configure it: over HTTPS
with the cluster's CA and a bearer token from a file. Without the token, or over plain HTTP, its
scrapes fail. Every query of the shipped Grafana dashboard is valid PromQL to that Prometheus, and
the call panels have data."""
import os
import secrets
import time

import pytest

from harness.cluster import killed_at_exit
from harness.prometheus import PrometheusServer
from harness.scrapes import consecutive_free_ports, dashboard_queries


def _wait(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} within {timeout} s")
        time.sleep(0.5)


@pytest.fixture(scope="module")
def scraped(request, tmp_path_factory):
    from conftest import started_cluster
    token_file = tmp_path_factory.mktemp("metrics") / "metrics.token"
    token_file.write_text(secrets.token_hex(32) + "\n")
    os.chmod(token_file, 0o600)
    port = consecutive_free_ports(2)
    cluster = started_cluster(backends=1, tls=True, extra_env={
        "DATACLAY_METRICS_PORT": str(port), "DATACLAY_METRICS_TOKEN_FILE": str(token_file)})
    request.addfinalizer(cluster.stop)
    ca = str(cluster.home / "tls" / "ca.pem")
    servers = [f"127.0.0.1:{port}", f"127.0.0.1:{port + 1}"]
    prometheus = PrometheusServer([
        {"job_name": "dataclay", "scheme": "https", "tls_config": {"ca_file": ca},
         "authorization": {"credentials_file": str(token_file)}, "static_configs": [{"targets": servers}]},
        {"job_name": "no-token", "scheme": "https", "tls_config": {"ca_file": ca},
         "static_configs": [{"targets": servers}]},
        {"job_name": "plain-http", "scheme": "http", "authorization": {"credentials_file": str(token_file)},
         "static_configs": [{"targets": servers}]},
    ]).start()
    request.addfinalizer(prometheus.stop)
    return cluster, prometheus


def test_prometheus_scrapes_every_server_over_https_with_the_token_and_fails_without_it(scraped):
    # setup
    cluster, prometheus = scraped
    # run: wait until every target was scraped once and the cluster's are up (a cold JVM's first TLS
    # scrape may take longer than the 2 s scrape timeout)
    def settled():
        t = prometheus.targets()
        scraped = t and all(x["lastScrape"] != "0001-01-01T00:00:00Z" for x in t)
        return t if scraped and all(x["health"] == "up" for x in t if x["labels"]["job"] == "dataclay") else None
    targets = _wait(settled, 60, "every target scraped and the cluster's up")
    # verify
    health = {(t["labels"]["job"], t["labels"]["instance"]): t for t in targets}
    assert len(health) == 6
    for (job, instance), t in health.items():
        if job == "dataclay":
            assert t["health"] == "up", (job, instance, t["lastError"])
        else:
            assert t["health"] == "down", (job, instance)
            if job == "no-token":
                assert "401" in t["lastError"], t["lastError"]
    up = {(r["metric"]["job"], r["metric"]["instance"]): r["value"][1] for r in prometheus.query("up")}
    assert sorted(v for (job, _), v in up.items() if job == "dataclay") == ["1", "1"]


def test_every_dashboard_query_is_valid_promql_and_the_call_panels_have_data(scraped):
    # setup: calls until Prometheus has seen them in two scrapes (a rate needs both)
    cluster, prometheus = scraped
    caller = cluster.popen_client("""
import time
from dataclay import api
api.init()
from people.model import Person
p = Person("scraped", 1)
p.make_persistent()
end = time.monotonic() + 90
while time.monotonic() < end:
    p.birthday()
""")
    # no call failed, no environment restarted, and the cluster's engine (kv) has no cache
    may_be_empty = ('grpc_status!="OK"', "restarts", "dataclay_store_cache_")

    def evaluated() -> dict:
        """Each query as Grafana would send it for "All" servers over a 30 s rate window."""
        results = {}
        for query in dashboard_queries():
            if query.startswith("label_values("):
                query = query[len("label_values("):].split(",")[0]  # the series whose instance labels it lists
            results[query] = prometheus.query(query.replace("$instance", ".*").replace("$__rate_interval", "30s"))
        return results

    def empty(results: dict) -> list:
        return sorted(q for q, r in results.items() if not r and not any(m in q for m in may_be_empty))

    # run: until every panel that must have data has it (under load a scrape may time out and leave
    # a gap: rates and increases need two samples in their window)
    with killed_at_exit(caller):
        deadline = time.monotonic() + 90
        while empty(results := evaluated()) and time.monotonic() < deadline:
            time.sleep(2)
    # verify: every query was accepted (query() asserts it), and every panel but those has series
    assert not empty(results), (empty(results), [(t["scrapeUrl"], t["health"], t["lastError"])
                                                 for t in prometheus.targets()])
