"""Prometheus metrics of a running cluster, scraped over HTTP as Prometheus would: the per-RPC
counters and histograms (gRFC A66 names) move by exactly the calls made, GetStats and GetStatus
report the same numbers, and the backend's own gauges follow what it stores."""
import json
import re
import subprocess
import time
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from dataclay._internal.rpc.dataservice import DataServiceClient
from dataclay._internal.rpc.logicmodule import LogicModuleClient
from harness.scrapes import DASHBOARD, PROMQL_WORDS, consecutive_free_ports, dashboard_queries

CALL_METHOD = "dataclay.v1.DataService/CallMethod"
NEW_SESSION = "dataclay.v1.LogicModule/NewSession"


def scrape(cluster, port: int) -> dict:
    """{(sample name, frozenset of labels): value} of one scrape of 127.0.0.1:port/metrics, with the
    bearer token `dataclay start` made in the cluster's home."""
    token = (cluster.home / "metrics.token").read_text().strip()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as r:
        assert r.status == 200
        text = r.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return samples


def value(samples: dict, name: str, **labels) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


@pytest.fixture(scope="module")
def metered(request):
    from conftest import started_cluster
    port = consecutive_free_ports(2)
    cluster = started_cluster(backends=1, extra_env={"DATACLAY_METRICS_PORT": str(port)})
    request.addfinalizer(cluster.stop)
    return cluster, port


def _one_call(cluster, name: str) -> None:
    """A client process that makes one object persistent and calls one method on it."""
    cluster.run_client(f"""
from dataclay import api
api.init()
from people.model import Person
p = Person({name!r}, 1)
p.make_persistent()
p.birthday()
""")


def _admin(cluster) -> LogicModuleClient:
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    lm.token = lm.new_session(cluster.admin_user(), cluster.admin_password(), "").token
    return lm


def test_method_calls_move_the_backends_counter_and_histogram_by_exactly_the_calls_made(metered):
    # setup: the object exists and one call has warmed everything up
    cluster, port = metered
    cluster.run_client("""
from dataclay import api
api.init()
from people.model import Person
Person("m", 1).make_persistent(alias="metered")
""")
    before = scrape(cluster, port + 1)
    # run: 7 method calls, one failing
    out = cluster.run_client("""
from dataclay import api
api.init()
from people.model import Person
p = Person.get_by_alias("metered")
ages = [p.birthday() for _ in range(6)]
try:
    p.fail("on purpose")
except ValueError:
    pass
print(ages[-1])
""")
    after = scrape(cluster, port + 1)
    # verify: 7 started, 7 timed: 6 OK, and the model's exception as UNKNOWN (REMOTE_EXCEPTION's status)
    assert out.stdout.strip() == "7"
    started = "grpc_server_call_started_total"
    assert value(after, started, grpc_method=CALL_METHOD) - value(before, started, grpc_method=CALL_METHOD) == 7
    count = "grpc_server_call_duration_seconds_count"
    ok = dict(grpc_method=CALL_METHOD, grpc_status="OK")
    assert value(after, count, **ok) - value(before, count, **ok) == 6
    raised = dict(grpc_method=CALL_METHOD, grpc_status="UNKNOWN")
    assert value(after, count, **raised) - value(before, count, **raised) == 1
    inf = dict(ok, le="+Inf")
    assert value(after, "grpc_server_call_duration_seconds_bucket", **inf) == value(after, count, **ok)
    assert value(after, "grpc_server_call_duration_seconds_sum", **ok) > value(before,
                                                                             "grpc_server_call_duration_seconds_sum", **ok)


def test_getstats_and_getstatus_report_the_numbers_a_scrape_shows(metered):
    # setup
    cluster, port = metered
    _one_call(cluster, "s")
    lm = _admin(cluster)
    (backend,) = lm.get_backends()
    ds = DataServiceClient(f"{backend.host}:{backend.port}", lm.token)
    # run: each pair read with nothing else calling in between (the heartbeats call the Logic Module,
    # not the counted NewSession; GetStatus counts itself before it answers)
    stats = lm.get_stats().calls
    lm_scrape = scrape(cluster, port)
    status = ds.get_status().calls
    ds_scrape = scrape(cluster, port + 1)
    # verify
    assert stats["NewSession"] == value(lm_scrape, "grpc_server_call_started_total", grpc_method=NEW_SESSION) >= 1
    assert status["CallMethod"] == value(ds_scrape, "grpc_server_call_started_total", grpc_method=CALL_METHOD) >= 1
    assert status["GetStatus"] == value(ds_scrape, "grpc_server_call_started_total",
                                        grpc_method="dataclay.v1.DataService/GetStatus")


def test_a_refused_call_is_counted_with_its_status(metered):
    # setup
    cluster, port = metered
    before = scrape(cluster, port)
    # run: a login with a wrong password
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    with pytest.raises(Exception):
        lm.new_session(cluster.admin_user(), "not-the-password", "")
    after = scrape(cluster, port)
    # verify
    refused = dict(grpc_method=NEW_SESSION, grpc_status="UNAUTHENTICATED")
    count = "grpc_server_call_duration_seconds_count"
    assert value(after, count, **refused) - value(before, count, **refused) == 1


def test_the_backends_gauges_follow_what_it_stores_and_runs(metered):
    # setup
    cluster, port = metered
    before = scrape(cluster, port + 1)
    # run: three more objects, one call each
    cluster.run_client("""
from dataclay import api
api.init()
from people.model import Person
for i in range(3):
    p = Person(f"g{i}", i)
    p.make_persistent()
    p.birthday()
""")
    after = scrape(cluster, port + 1)
    # verify
    assert value(after, "dataclay_store_objects", engine="kv") - value(before, "dataclay_store_objects", engine="kv") == 3
    assert value(after, "dataclay_store_used_bytes", engine="kv") > 0
    lm = _admin(cluster)
    (backend,) = lm.get_backends()
    store = DataServiceClient(f"{backend.host}:{backend.port}", lm.token).get_status().store
    assert value(after, "dataclay_store_capacity_bytes", engine="kv") == store.capacity_bytes > 255 << 20
    calls = "dataclay_environment_calls_total"
    assert value(after, calls, language="python") - value(before, calls, language="python") == 3
    assert value(after, "dataclay_environment_processes", language="python") >= 1
    assert value(after, "dataclay_environment_calls_in_flight", language="python") == 0
    assert value(after, "jvm_threads_current") > 0


def test_labels_stay_bounded_no_object_account_or_alias_appears(metered):
    # setup
    cluster, port = metered
    # run
    names = set()
    label_values = set()
    for p in (port, port + 1):
        for (name, labels) in scrape(cluster, p):
            names.add(name)
            label_values |= {v for _, v in labels}
    # verify: only methods, statuses, engines, languages, buckets and the JVM's own
    assert cluster.admin_user() not in label_values
    assert "metered" not in label_values
    assert not any(len(v) == 36 and v.count("-") == 4 for v in label_values), "an ID appears as a label"


def test_the_endpoint_listens_on_loopback_only_at_the_ports_the_launcher_gave(metered):
    # setup
    cluster, port = metered
    # run
    listening = subprocess.run(["ss", "-Hltn"], capture_output=True, text=True, check=True).stdout.split()
    # verify: the Logic Module at the port set, backend 0 at the next; 127.0.0.1, not every interface
    for p in (port, port + 1):
        local = {a for a in listening if a.endswith(f":{p}")}
        assert local and local <= {f"127.0.0.1:{p}", f"[::ffff:127.0.0.1]:{p}"}, local
    logs = cluster.logs()
    assert f"logic module metrics on port {port} of 127.0.0.1" in logs
    assert f"metrics on port {port + 1} of 127.0.0.1" in logs


TWO_LM_ONLY = "dataclay_store_cache_"


def dashboard_metric_names() -> set[str]:
    return {n for q in dashboard_queries() for n in re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{", q)}


def test_every_metric_the_grafana_dashboard_names_is_one_the_servers_export(metered):
    # setup: every panel's series exists (a call of each kind made)
    cluster, port = metered
    _one_call(cluster, "d")
    exported = {name for p in (port, port + 1) for (name, _) in scrape(cluster, p)}
    # run: the metric names in the queries (an identifier before a selector or a comma/paren in label_values)
    named, other = set(), set()
    for query in dashboard_queries():
        bare = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\"[^\"]*\"", " ", query)  # selectors, ranges and strings out
        named |= set(re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{", query))
        named |= set(re.findall(r"label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*)", query))
        other |= set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", bare))
    labels = {"grpc_method", "grpc_status", "instance", "language", "le", "state"}
    # verify: every metric named is exported (2lm's own by a 2lm backend: the next test), and nothing
    # else in a query could be a metric
    assert other - named <= PROMQL_WORDS | labels, sorted(other - named - PROMQL_WORDS - labels)
    named = {n for n in named if not n.startswith(TWO_LM_ONLY)}
    assert named and named <= exported, sorted(named - exported)


def test_the_grafana_dashboard_is_importable_as_it_is():
    # setup
    dashboard = json.loads(DASHBOARD.read_text())
    # verify: what Grafana's import reads: a title, a uid, panels with unique ids on the grid, a
    # Prometheus data source chosen at import, every target on it
    assert dashboard["title"] and dashboard["uid"] and dashboard["schemaVersion"] >= 36
    assert "id" not in dashboard  # an id would overwrite another dashboard on import
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for p in dashboard["panels"]:
        grid = p["gridPos"]
        assert 0 <= grid["x"] and grid["x"] + grid["w"] <= 24 and grid["h"] > 0
        for t in p.get("targets", []):
            assert t["datasource"] == {"type": "prometheus", "uid": "${datasource}"} and t["expr"].strip()
    (source,) = [v for v in dashboard["templating"]["list"] if v["type"] == "datasource"]
    assert source["name"] == "datasource" and source["query"] == "prometheus"


REPLICATED = """
import json, sys
from dataclay import api
api.init()
from people.model import Account
backends = sorted(api.get_backends())
names = {b: api.get_backends()[b].name for b in backends}
x = Account("x", 0); x.make_persistent(alias="x-on-first", backend_id=backends[0]); x.new_replica(backend_id=backends[1])
y = Account("y", 0); y.make_persistent(alias="y-on-second", backend_id=backends[1]); y.new_replica(backend_id=backends[0])
for n in range(5):
    x.deposit(n)
print(json.dumps({"first": names[backends[0]], "second": names[backends[1]]}))
"""


def _metrics_port(base: int, backend_name: str) -> int:
    return base + int(backend_name.rsplit("-", 1)[1])  # backend-1 is backend 0: the port + 1


def test_replication_and_failover_metrics_move_when_a_backend_is_cut_off(make_cluster):
    # setup: x mastered on the first backend with a replica on the second, y the other way round;
    # promotions after 3 s of silence
    port = consecutive_free_ports(3)
    cluster = make_cluster(backends=2, extra_env={
        "DATACLAY_METRICS_PORT": str(port), "DATACLAY_BACKEND_TIMEOUT_MS": "1500", "DATACLAY_PROMOTE_AFTER_MS": "3000"})
    placed = json.loads(cluster.run_client(REPLICATED).stdout.strip().splitlines()[-1])
    first, second = _metrics_port(port, placed["first"]), _metrics_port(port, placed["second"])
    sent = scrape(cluster, first)
    # run: kill the first backend; write y on the second, whose replica was on the first
    cluster.kill(placed["first"])
    wrote = cluster.run_client("""
from dataclay import api
api.init()
from people.model import Account
print(Account.get_by_alias("y-on-second").deposit(7))
""")
    # verify: five changes went to x's replica, and nothing is awaited
    assert value(sent, "dataclay_replication_batches_sent_total") == 5
    assert value(sent, "dataclay_replication_acknowledgements_awaited") == 0
    assert value(sent, "dataclay_replication_send_seconds_total") > 0
    # the second backend dropped y's replica on the dead one, and acknowledged the write
    assert wrote.stdout.strip() == "7"
    assert value(scrape(cluster, second), "dataclay_replication_replicas_dropped_total") == 1
    # the Logic Module promoted x's replica: one object, a term raised, one backend silent
    deadline = time.monotonic() + 30
    while value(lm := scrape(cluster, port), "dataclay_failover_promoted_objects_total") < 1 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert value(lm, "dataclay_failover_promoted_objects_total") == 1
    assert value(lm, "dataclay_failover_highest_term") >= 1
    assert value(lm, "dataclay_backends", state="silent") == 1 and value(lm, "dataclay_backends", state="alive") == 1


def test_a_2lm_backend_exports_its_cache_and_a_kv_one_does_not(metered, make_cluster):
    # setup
    port = consecutive_free_ports(2)
    cluster = make_cluster(backends=1, store="2lm", extra_env={"DATACLAY_METRICS_PORT": str(port)})
    before = scrape(cluster, port + 1)
    # run: an object written and read back through the cache
    cluster.run_client("""
from dataclay import api
api.init()
from people.model import Person
p = Person("c", 1)
p.make_persistent()
for _ in range(5):
    p.birthday()
""")
    after = scrape(cluster, port + 1)
    # verify
    hits = "dataclay_store_cache_hits_total"
    assert value(after, hits) - value(before, hits) >= 1
    assert ("dataclay_store_cache_misses_total", frozenset()) in after
    assert value(after, "dataclay_store_cache_bytes") > 0
    assert ("dataclay_store_cache_dirty_bytes", frozenset()) in after
    assert not any(name.startswith(TWO_LM_ONLY) for (name, _) in scrape(metered[0], metered[1] + 1))
    on_dashboard = {n for n in dashboard_metric_names() if n.startswith(TWO_LM_ONLY)}
    assert on_dashboard and on_dashboard <= {name for (name, _) in after}
