"""The command line on a real cluster: `dataclay start/stop/status` and `dataclaycmd`."""
import textwrap

from harness.cluster import Cluster
from harness.models import one_field_model, write_model
from test_core_acceptance import client


def test_status_lists_backends_with_address_liveness_engine_and_objects(make_cluster):
    cluster = make_cluster()
    client(cluster, """
        for i in range(3):
            Counter(i).make_persistent()
        print(json.dumps({}))
    """)
    text = cluster.status()
    assert "Logic Module 127.0.0.1:" in text and "up" in text
    assert text.count("alive") >= 2
    assert "store kv:" in text
    assert "python up" in text
    counts = [int(line.split("store kv: ")[1].split()[0]) for line in text.splitlines() if "store kv: " in line]
    assert sum(counts) == 3


def test_dataclaycmd_accounts_backends_stubs_and_waits(cluster, tmp_path):
    admin = cluster.admin_user()
    assert "alive" in cluster.dataclaycmd("WaitForDataClayToBeAlive", "5", "1").stdout
    assert "2 python backend(s) alive" in cluster.dataclaycmd("WaitForBackends", "python", "2").stdout
    listed = cluster.dataclaycmd("GetBackends", admin, "-").stdout
    assert listed.count("alive") == 2 and "python" in listed
    cluster.dataclaycmd("NewAccount", "carol", "carol-password")
    assert cluster.dataclaycmd("GetBackends", "carol", "carol-password").returncode == 0
    duplicate = cluster.dataclaycmd("NewAccount", "carol", "another-password", check=False)
    assert duplicate.returncode == 1 and "carol" in duplicate.stderr
    cluster.dataclaycmd("GetStubs", admin, "-", "tests", str(tmp_path / "stubs"))
    assert (tmp_path / "stubs" / "people" / "model.py").read_text().startswith('"""Classes the integration')
    wrong = cluster.dataclaycmd("GetBackends", admin, "wrong-password", check=False)
    assert wrong.returncode == 1 and "password" in wrong.stderr.lower()
    usage = cluster.dataclaycmd("NewModel", admin, "-", check=False)
    assert usage.returncode == 2 and "NewModel takes 5 arguments" in usage.stderr
    assert "usage: dataclaycmd NewModel <user> <pass> <namespace>" in usage.stderr and "GetStubs" not in usage.stderr


def test_new_model_runs_no_user_code_and_reaches_backends_that_join_later(make_cluster, tmp_path):
    # setup: a model whose top-level code would leave a trace if it ever ran at registration
    trace = tmp_path / "ran"
    write_model(tmp_path / "model", "late", textwrap.dedent(f"""
        import pathlib
        try:
            pathlib.Path({str(trace)!r}).write_text("top-level code ran")
        except OSError:
            pass  # in a backend, confined code cannot write there: only registration's trace matters
    """) + one_field_model("Square", "side", "int", "area", "int", "self.side * self.side"), module="shapes")
    cluster = make_cluster(backends=1)
    # run
    out = cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "shapes", str(tmp_path / "model"), "python")
    assert not trace.exists()
    cluster.backends = 2
    cluster.start()
    trace.unlink(missing_ok=True)
    cluster.env["PYTHONPATH"] = str(tmp_path / "model") + ":" + cluster.env["PYTHONPATH"]
    seen = client(cluster, """
        from late.shapes import Square
        names = {i: b.name for i, b in api.get_backends().items()}
        late = next(i for i, n in names.items() if n == "backend-2")
        s = Square(7); s.make_persistent(backend_id=late)
        print(json.dumps({"area": s.area(), "where": names[s.get_location()]}))
    """)
    # verify
    assert "late.shapes.Square" in out.stdout
    assert seen == {"area": 49, "where": "backend-2"}


def test_start_with_an_explicit_administrator_keeps_its_password_out_of_the_client_file(tmp_path):
    cluster = Cluster(backends=1, extra_env={"DATACLAY_USER": "root-admin", "DATACLAY_PASSWORD": "s3cret-password"})
    try:
        cluster.start()
        props = (cluster.home / "client.properties").read_text()
        assert "DATACLAY_USER=root-admin" in props and "s3cret-password" not in props
        assert "1 python backend(s) alive" in cluster.dataclaycmd("WaitForBackends", "python", "1").stdout
    finally:
        cluster.stop()


def test_start_refuses_bad_options_and_a_taken_port_with_clear_messages(cluster):
    bad_engine = cluster.dataclay("start", "--store", "floppy")
    assert bad_engine.returncode == 2 and "floppy" in bad_engine.stderr
    other_engine = cluster.dataclay("start", "--store", "memory")
    assert other_engine.returncode == 1 and "kv" in other_engine.stderr
    squatter = Cluster(backends=1)
    squatter.env["DATACLAY_PORT"] = str(cluster.port)
    try:
        taken = squatter.dataclay("start")
        assert taken.returncode == 1 and "already in use" in taken.stderr
    finally:
        squatter.stop()


def test_start_on_postgres_without_its_database_url_is_refused_before_anything_starts():
    cluster = Cluster(store="postgres")
    try:
        # run
        result = cluster.dataclay("start", "--backends", "1", "--store", "postgres")
        # verify
        assert result.returncode != 0
        assert "DATACLAY_STORE_URL" in result.stderr, result.stderr
        assert cluster.pids() == {}
    finally:
        cluster.stop()


def test_a_pool_made_by_another_engine_is_refused_at_start_and_left_intact(make_cluster):
    # setup: a kv cluster with an object, stopped
    kv = make_cluster(backends=1)
    client(kv, """
        Person("pat", 7).make_persistent(alias="pat")
        print(json.dumps({}))
    """)
    kv.stop_processes()
    heap = Cluster(backends=1, store="heap", extra_env={"DATACLAY_STORE_PATH": str(kv.pools)})
    try:
        # run: another cluster tries the same pools with the heap engine
        result = heap.dataclay("start", "--backends", "1", "--store", "heap")
    finally:
        heap.stop()
    # verify: refused, naming the engine that made the pool; the kv cluster still has its object
    assert result.returncode != 0
    assert "kv" in result.stderr and "heap" in result.stderr, result.stderr
    kv.start()
    assert client(kv, """
        print(json.dumps({"age": Person.get_by_alias("pat").age}))
    """) == {"age": 7}


def test_listing_commands_print_one_json_document_and_waits_take_a_timeout(cluster):
    import json
    import time
    admin = cluster.admin_user()
    # --json: one document on standard output, with fixed keys
    backends = json.loads(cluster.dataclaycmd("GetBackends", admin, "-", "--json").stdout)
    assert sorted(b["name"] for b in backends) == ["backend-1", "backend-2"]
    assert all(set(b) == {"id", "name", "host", "port", "languages", "alive"} and b["alive"] for b in backends)
    cluster.dataclaycmd("NewDataset", admin, "-", f"{admin}.cli")
    contracts = json.loads(cluster.dataclaycmd("GetDataContracts", admin, "-", "--json").stdout)
    assert any(c["dataset"] == f"{admin}.cli" and c["expires"] is None and c["read_only"] is False
               for c in contracts), contracts
    status = cluster.dataclay("status", "--json")
    assert status.returncode == 0 and json.loads(status.stdout)["health"] == "up"
    # --timeout: a wait that cannot be met gives up when told, naming the option
    started = time.monotonic()
    waited = cluster.dataclaycmd("WaitForBackends", "python", "3", "--timeout", "1", check=False)
    assert waited.returncode == 1 and "after 1 s" in waited.stderr and "--timeout" in waited.stderr
    assert time.monotonic() - started < 30
    # help and version need no cluster and name the command
    assert "WaitForBackends <python|java> <n> [--timeout SECONDS]" in cluster.dataclaycmd("help", "WaitForBackends").stdout
    assert cluster.dataclay("--version").stdout.startswith("dataclay (pmclay) ")
    assert "--timeout SECONDS" in cluster.dataclay("start", "--help").stdout


def _start_on_a_terminal(cluster: Cluster) -> str:
    """`dataclay start` with its standard error on a pseudo-terminal; what it wrote there."""
    import os
    import pty
    import subprocess
    from harness.cluster import _command
    leader, follower = pty.openpty()
    try:
        started = subprocess.run([_command("dataclay"), "start", "--backends", str(cluster.backends)], env=cluster.env,
                                 stdout=subprocess.PIPE, stderr=follower, timeout=120)
        os.close(follower)
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            out += chunk
        assert started.returncode == 0, out
        return out.decode(errors="replace")
    finally:
        os.close(leader)


def test_start_shows_a_progress_bar_on_a_terminal_and_none_in_a_pipe():
    import subprocess
    from harness.cluster import _command
    # setup
    cluster = Cluster(backends=2)
    try:
        # run: first on a terminal, then (after a stop) with standard error in a pipe
        on_terminal = _start_on_a_terminal(cluster)
        cluster.stop_processes()
        piped = subprocess.run([_command("dataclay"), "start", "--backends", "2"], env=cluster.env,
                               capture_output=True, text=True, timeout=120)
    finally:
        cluster.stop()
    # verify: a redrawn bar with the count, a rate and an elapsed/remaining time; nothing in a pipe
    assert "waiting for backends" in on_terminal and "\r" in on_terminal, on_terminal
    assert "2/2" in on_terminal and "backend/s" in on_terminal and "<" in on_terminal, on_terminal
    assert piped.returncode == 0, piped.stderr
    assert "waiting for backends" not in piped.stderr + piped.stdout
