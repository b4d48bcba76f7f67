"""A real Prometheus scrapes a TLS cluster's metrics as an operator would configure it: over HTTPS
with the cluster's CA and a bearer token from a file. Without the token, or over plain HTTP, its
scrapes fail. Every query of the shipped Grafana dashboard is valid PromQL to that Prometheus, and
the call panels have data."""
import os
import secrets
import time

import pytest

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
    # run: wait until every target was scraped once
    targets = _wait(lambda: (t := prometheus.targets()) and all(x["lastScrape"] != "0001-01-01T00:00:00Z" for x in t)
                    and t, 30, "every target scraped")
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
    # setup: calls for a few seconds, so rates have two scrapes to work on
    cluster, prometheus = scraped
    cluster.run_client("""
import time
from dataclay import api
api.init()
from people.model import Person
p = Person("scraped", 1)
p.make_persistent()
end = time.monotonic() + 4
while time.monotonic() < end:
    p.birthday()
""")
    _wait(lambda: prometheus.query('sum(rate(grpc_server_call_started_total{grpc_method='
                                   '"dataclay.v1.DataService/CallMethod"}[30s])) > 0'), 20, "a call rate")
    # run: each query as Grafana would send it for "All" servers over a 30 s rate window
    results = {}
    for query in dashboard_queries():
        if query.startswith("label_values("):
            query = query[len("label_values("):].split(",")[0]  # the series whose instance labels it lists
        promql = query.replace("$instance", ".*").replace("$__rate_interval", "30s")
        results[query] = prometheus.query(promql)
    # verify: all were accepted (query() asserts it); the call, latency, store and JVM panels have series
    empty = sorted(q for q, r in results.items() if not r)
    # no call failed, no environment restarted, and the cluster's engine (kv) has no cache
    allowed_empty = {q for q in results if 'grpc_status!="OK"' in q or "restarts" in q or "dataclay_store_cache_" in q}
    assert set(empty) <= allowed_empty, empty
