"""The warm-up pass of a starting cluster (DATACLAY_WARMUP, `dataclay start --warm-up`): it calls
every backend through the environments before `dataclay start` returns, then leaves nothing of it,
and a bad value is refused before anything starts."""
import json
import pathlib
import re
import subprocess

import pytest

from dataclay._internal.cli.local import warm_up
from dataclay._internal.rpc.dataservice import DataServiceClient
from harness.cluster import Cluster, _command
from harness.scrapes import consecutive_free_ports
from test_metrics import _admin, scrape, value

WARM_UP_NAMESPACE = "dataclay_warm_up_"


def lm_totals(cluster) -> dict:
    """Objects, aliases and objects collected since the start, as the cluster's administrator sees them."""
    stats = _admin(cluster).get_stats()
    return {"objects": stats.objects, "aliases": stats.aliases, "collected": stats.objects_collected}


def test_a_warm_up_calls_each_backend_then_leaves_no_model_or_object_of_it(make_cluster):
    # setup: two backends, each scraped for the calls its environments ran
    port = consecutive_free_ports(3)
    # run
    cluster = make_cluster(backends=2, extra_env={"DATACLAY_WARMUP": "400", "DATACLAY_METRICS_PORT": str(port)})
    # verify: it said what it did
    assert re.search(r"^warmed up in [\d.]+ s: 400 calls on each of 2 backend\(s\), then [\d.]+ s for the JIT to "
                     r"finish; its model and 2 object\(s\) removed$", cluster.start_output, re.M), cluster.start_output
    # each backend ran the warm-up's updates (three in four of its calls: the others are reads the store
    # answers), and its JIT compiled meanwhile
    for backend_port in (port + 1, port + 2):
        assert value(scrape(cluster, backend_port), "dataclay_environment_calls_total", language="python") >= 300
    lm = _admin(cluster)
    for backend in lm.get_backends():
        assert DataServiceClient(f"{backend.host}:{backend.port}", lm.token).get_status().jit_compile_ms > 0
    # and nothing of it is left: no model, no object
    listed = cluster.dataclaycmd("ListModels", cluster.admin_user(), "-", "--json").stdout
    assert WARM_UP_NAMESPACE not in listed and '"tests"' in listed, listed
    # (a session still open would have held its object from the collection)
    totals = lm_totals(cluster)
    assert (totals["objects"], totals["aliases"], totals["collected"]) == (0, 0, 2), totals
    # and programs use the cluster as before
    assert cluster.run_client("""
from dataclay import api
api.init()
from people.model import Counter
c = Counter(5)
c.make_persistent()
print(c.increment(2))
""").stdout.strip() == "7"


def test_a_bad_warm_up_is_refused_before_anything_starts():
    # setup
    cluster = Cluster(backends=1)
    try:
        # run
        option = subprocess.run([_command("dataclay"), "start", "--warm-up", "lots"], env=cluster.env,
                                capture_output=True, text=True, timeout=60)
        setting = subprocess.run([_command("dataclay"), "start"], env={**cluster.env, "DATACLAY_WARMUP": "-3"},
                                 capture_output=True, text=True, timeout=60)
        # verify
        assert option.returncode == 2
        assert "--warm-up: must be a whole number of calls per backend" in option.stderr, option.stderr
        assert "not 'lots'" in option.stderr and "20000" in option.stderr
        assert setting.returncode == 1
        assert "DATACLAY_WARMUP must be a whole number of calls per backend" in setting.stderr, setting.stderr
        assert "not '-3'" in setting.stderr
        assert not (cluster.home / "cluster.json").exists() and cluster.pids() == {}
    finally:
        cluster.stop()


def test_a_warm_up_of_a_cluster_that_holds_objects_collects_none_of_them(make_cluster):
    # setup: an object without an alias, which a cluster run with DATACLAY_GC_INTERVAL=0 keeps
    cluster = make_cluster(backends=1)
    cluster.run_client("""
from dataclay import api
api.init()
from people.model import Counter
Counter(3).make_persistent()
""")
    # run: `dataclay start` again, on the running cluster, with a warm-up
    result = cluster.dataclay("start", "--warm-up", "100")
    # verify: the warm-up's own object is left to a collection, and no collection ran
    assert result.returncode == 0, result.stdout + result.stderr
    assert "for the JIT to finish; its model removed, and its 1 object(s)" in result.stdout, result.stdout
    totals = lm_totals(cluster)
    assert (totals["objects"], totals["collected"]) == (2, 0), totals


def test_a_pass_past_its_time_is_stopped_with_its_workers_and_says_how_to_remove_its_model(make_cluster, monkeypatch):
    # setup: a pass far too long for the time it is given
    cluster = make_cluster(backends=1)
    monkeypatch.setattr(warm_up, "FIXED_SECONDS", 8.0)
    monkeypatch.setattr(warm_up, "SECONDS_PER_CALL", 0.0)
    # run
    with pytest.raises(warm_up.WarmUpError) as refused:
        warm_up.run(5_000_000, cluster.home)
    # verify: it says so, no process of it is left, and the model it names the way to is removable
    assert "did not end within 8 s and was stopped" in str(refused.value)
    assert "RemoveModel <user> - <namespace> --force" in str(refused.value)
    assert not [p for p in pathlib.Path("/proc").glob("[0-9]*") if _is_warm_up(p)]
    listed = json.loads(cluster.dataclaycmd("ListModels", cluster.admin_user(), "-", "--json").stdout)
    left = [m["namespace"] for m in listed if m["namespace"].startswith(WARM_UP_NAMESPACE)]
    assert len(left) == 1, listed
    cluster.dataclaycmd("RemoveModel", cluster.admin_user(), "-", left[0], "--force")


def _is_warm_up(proc: pathlib.Path) -> bool:
    try:
        return warm_up.MODULE.encode() in (proc / "cmdline").read_bytes()
    except OSError:
        return False
