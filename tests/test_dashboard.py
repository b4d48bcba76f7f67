"""`dataclay dashboard` over HTTP against a running cluster: nothing without a log-in, only
administrators in, sessions that end, and the JSON API's documents (backends, calls, models,
datasets, sessions, history, and where an object lives). The browser itself is in
test_dashboard_browser.py."""
import json
import subprocess
import textwrap
import time

import pytest

from harness.cluster import _command
from harness.dashboard import PRIVATE_URLS, Dashboard

pytestmark = pytest.mark.timeout(300)

USER, USER_PW = "dashviewer", "viewer-password-1"


@pytest.fixture(scope="module")
def cluster(request):
    from conftest import started_cluster
    cluster = started_cluster(backends=2)
    request.addfinalizer(cluster.stop)
    cluster.dataclaycmd("NewAccount", USER, USER_PW)
    return cluster


@pytest.fixture(scope="module")
def dashboard(cluster):
    with Dashboard(cluster) as running:
        yield running


@pytest.fixture
def admin(cluster, dashboard):
    web = dashboard.client()
    assert web.login(cluster.admin_user(), cluster.admin_password()).status == 200
    return web


def client_json(cluster, body: str) -> dict:
    code = "import json\nfrom dataclay import api\napi.init()\nfrom people.model import Person\n" + textwrap.dedent(body)
    return json.loads(cluster.run_client(code).stdout.strip().splitlines()[-1])


def test_every_page_and_api_url_answers_401_without_a_live_session(cluster, dashboard):
    web = dashboard.client()
    for url in PRIVATE_URLS:
        answer = web.get(url)
        assert answer.status == 401, url
        assert "default-src 'none'" in answer.headers["content-security-policy"], url
    page = web.get("/")
    assert b'id="login-form"' in page.body and b"<script>" not in page.body
    assert web.get("/api/v1/overview").json()["error"].startswith("log in first")
    assert web.get("/login.js").status == 200 and web.get("/style.css").status == 200
    # a made-up cookie is no session, and a wrong password gets in nowhere
    web.cookie = "dataclay_dashboard=forged"
    assert web.get("/api/v1/overview").status == 401
    refused = web.login(cluster.admin_user(), "not-the-password")
    assert refused.status == 401 and refused.json() == {"error": "wrong account name or password"}
    assert "set-cookie" not in refused.headers
    assert web.post("/api/v1/overview", {}).status == 401


def test_log_in_gives_an_httponly_strict_cookie_and_the_overview_lists_the_backends(cluster, dashboard):
    web = dashboard.client()
    answer = web.login(cluster.admin_user(), cluster.admin_password())
    assert answer.status == 200 and answer.json() == {"user": cluster.admin_user()}
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert web.get("/").status == 200 and b"/app.js" in web.get("/").body
    overview = web.api("overview").json()
    backends = overview["backends"]
    assert len(backends) == 2 and all(b["alive"] and b["engine"] == "kv" for b in backends)
    assert all(b["durability"] and b["objects"] is not None and b["environments"] for b in backends)
    assert overview["logic_module"]["version"] and overview["logic_module"]["tls"] is False
    page = web.api(f"backends/{backends[0]['id']}").json()
    assert page["name"] == backends[0]["name"] and any(r["rpc"] == "GetStatus" for r in page["rpcs"])
    missing = web.api("backends/no-such-backend")
    assert missing.status == 404 and "no backend has ID" in missing.json()["error"]


def test_the_search_shows_where_an_object_lives_with_its_replicas_and_versions(cluster, admin):
    # setup: an aliased object on the first backend, a replica on the second, and a version
    made = client_json(cluster, """
        backends = sorted(api.get_backends())
        p = Person("located", 40)
        p.make_persistent(alias="located-person", backend_id=backends[0])
        p.new_replica(backend_id=backends[1])
        v = p.new_version(backend_id=backends[1])
        print(json.dumps({"id": str(p.getID()), "version": str(v.getID()), "backends": [str(b) for b in backends]}))
    """)
    # run
    found = admin.api("locate", q="located-person").json()
    by_id = admin.api("locate", q=made["version"]).json()
    unknown = admin.api("locate", q="no-such-alias")
    empty = admin.api("locate", q="  ")
    # check
    (obj,) = found["objects"]
    assert obj["id"] == made["id"] and obj["class_name"] == "people.model.Person" and obj["aliases"] == ["located-person"]
    assert obj["master"]["id"] == made["backends"][0] and obj["master"]["alive"]
    assert [r["id"] for r in obj["replicas"]] == [made["backends"][1]]
    assert [v["id"] for v in obj["versions"]] == [made["version"]]
    assert by_id["objects"][0]["version_of"] == made["id"]
    assert unknown.status == 404 and "no object has the alias 'no-such-alias'" in unknown.json()["error"]
    assert empty.status == 400 and "alias or an object ID" in empty.json()["error"]
    # the CLI prints the same document
    printed = cluster.dataclay("locate", "located-person")
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout) == found


def test_the_call_charts_count_the_calls_made(cluster, admin):
    # setup: an object and a sampled quiet period
    client_json(cluster, """
        Person("charted", 1).make_persistent(alias="charted")
        print("{}")
    """)
    time.sleep(2.5)
    name = client_json(cluster, "print(json.dumps(str(Person.get_by_alias('charted').get_location())))")
    backend = next(b["name"] for b in admin.api("overview").json()["backends"] if b["id"] == name)
    before = admin.api("calls").json().get(backend, [])
    # run: 60 method calls in one client
    client_json(cluster, """
        p = Person.get_by_alias("charted")
        for _ in range(60):
            p.birthday()
        print("{}")
    """)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        time.sleep(1.5)
        series = admin.api("calls").json()
        after = [p for p in series.get(backend, []) if p["at"] > (before[-1]["at"] if before else 0)]
        counted = sum(b["rate"] * (b["at"] - a["at"]) for a, b in zip(([before[-1]] if before else []) + after, after))
        if counted >= 60:
            break
    # check: the 60 calls, and the few the client's lookups add, no more
    assert 60 <= round(counted) <= 70, series.get(backend)
    assert any(p["p50_ms"] is not None and p["p99_ms"] >= p["p50_ms"] for p in after)
    assert series["cluster"] and series["logicmodule"]


def test_models_datasets_sessions_and_the_gc_history(cluster, admin):
    models = admin.api("models").json()
    assert any(m["namespace"] == "tests" and m["language"] == "python" and m["classes"] > 0 for m in models)
    datasets = admin.api("datasets").json()["datasets"]
    assert any(d["owner"] == cluster.admin_user() and d["objects"] >= 0 for d in datasets)
    sessions = admin.api("sessions").json()
    assert sessions["open"] >= 1 and cluster.admin_user() in [s["account"] for s in sessions["by_account"]]
    cluster.dataclaycmd("CollectGarbage", cluster.admin_user(), cluster.admin_password())
    events = admin.api("events").json()
    assert events[0]["kind"] == "gc" and "examined" in events[0]["detail"]


def test_only_administrators_get_in_and_the_answer_says_why(cluster, dashboard):
    web = dashboard.client()
    answer = web.login(USER, USER_PW)
    assert answer.status == 403 and "for administrators" in answer.json()["error"]
    assert web.cookie is None and web.get("/api/v1/overview").status == 401


def test_an_idle_session_expires_and_a_logged_out_one_is_gone(cluster):
    with Dashboard(cluster, "--idle-minutes", "0.03") as short:
        web = short.client()
        assert web.login(cluster.admin_user(), cluster.admin_password()).status == 200
        assert web.api("whoami").status == 200
        time.sleep(2.5)
        expired = web.api("whoami")
        assert expired.status == 401 and "expired" in expired.json()["error"]
    with Dashboard(cluster) as running:
        web = running.client()
        assert web.login(cluster.admin_user(), cluster.admin_password()).status == 200
        kept = web.cookie
        assert web.post("/api/v1/logout", {}).json() == {"logged_out": True}
        web.cookie = kept                                   # a copied cookie is dead too
        assert web.api("whoami").status == 401


def test_guessing_is_throttled_and_other_sites_are_refused(cluster):
    with Dashboard(cluster) as running:
        web = running.client()
        for _ in range(5):
            assert web.login(cluster.admin_user(), "guess").status == 401
        throttled = web.login(cluster.admin_user(), cluster.admin_password())
        assert throttled.status == 429 and int(throttled.headers["retry-after"]) > 0
        other = running.client()
        foreign = other.post("/api/v1/login", {"user": "a", "password": "b"}, headers={"Origin": "https://evil.example"})
        assert foreign.status == 403
        form = other.request("POST", "/api/v1/login", b"user=a&password=b",
                             headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert form.status == 415
        assert other.get("/", host="evil.example").status == 421   # DNS rebinding onto the loopback dashboard
        huge = other.request("POST", "/api/v1/login", b"{" + b" " * 10_000 + b"}",
                             headers={"Content-Type": "application/json"})
        assert huge.status == 413


def test_beyond_loopback_the_dashboard_needs_tls(cluster):
    result = subprocess.run([_command("dataclay"), "dashboard", "--host", "0.0.0.0", "--port", "1"], env=cluster.env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "needs TLS" in result.stderr
    half = subprocess.run([_command("dataclay"), "dashboard", "--cert", "x.pem"], env=cluster.env,
                          capture_output=True, text=True, timeout=60)
    assert half.returncode == 1 and "both --cert and --key" in half.stderr


def test_a_tls_cluster_gets_an_https_dashboard_with_a_certificate_from_its_ca(make_cluster):
    cluster = make_cluster(backends=1, tls=True)
    with Dashboard(cluster) as running:
        assert running.banner.startswith("dataClay dashboard on https://")
        web = running.client()                              # verifies the certificate against the cluster's CA
        answer = web.login(cluster.admin_user(), cluster.admin_password())
        assert answer.status == 200
        cookie = answer.headers["set-cookie"]
        assert cookie.startswith("__Host-dataclay_dashboard=") and "Secure" in cookie
        assert "max-age" in answer.headers["strict-transport-security"]
        overview = web.api("overview").json()
        assert overview["logic_module"]["tls"] is True and overview["backends"][0]["alive"]
