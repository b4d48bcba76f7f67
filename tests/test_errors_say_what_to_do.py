"""Errors a newcomer meets in the first hour name the cause and the fix, with no internal traceback
before them: a class of the script being run or of no registered model, a wrong password, a backend
that is gone, a cluster that is stopped; and `dataclay status` tells scripts which one it is."""
import json
import textwrap

from harness.waiting import wait_until
from test_core_acceptance import client

LOOSE = textwrap.dedent('''
    from dataclay import DataClayObject


    class Loose(DataClayObject):
        x: int

        def __init__(self, x):
            self.x = x
''')


def _frames(stderr: str) -> int:
    return stderr.count('  File "')


def test_first_hour_errors_name_the_cause_and_the_fix(make_cluster, tmp_path):
    cluster = make_cluster(backends=1)
    (tmp_path / "loose").mkdir()
    (tmp_path / "loose" / "__init__.py").write_text("")
    (tmp_path / "loose" / "model.py").write_text(LOOSE)
    cluster.env["PYTHONPATH"] = f"{tmp_path}:{cluster.env['PYTHONPATH']}"

    # a class of the script being run: refused on the client, saying it can never be stored and what to do
    script = cluster.run_client(textwrap.dedent("""
        from dataclay import api, DataClayObject
        api.init()

        class Point(DataClayObject):
            x: int

        Point().make_persistent()
    """), check=False)
    assert script.returncode == 1
    assert "class Point is defined in the script being run (module __main__)" in script.stderr
    assert "dataclaycmd NewModel <user> - <namespace> <directory> python" in script.stderr

    # a class of a module no registered model holds: the backend names the command, with no jargon
    loose = cluster.run_client(textwrap.dedent("""
        from dataclay import api
        api.init()
        from loose.model import Loose
        Loose(1).make_persistent()
    """), check=False)
    assert loose.returncode == 1
    assert ("ClassNotRegisteredError: class loose.model.Loose is not in any registered model: register the model "
            "that defines it with dataclaycmd NewModel <user> - <namespace> <directory holding loose> python"
            ) in loose.stderr, loose.stderr
    assert "objects[0]" not in loose.stderr and "PYTHON" not in loose.stderr

    # a wrong password: the message and the user's own line, not the library's frames
    wrong = cluster.run_client("from dataclay import api; api.init()", check=False)
    assert wrong.returncode == 0  # the right password, from client.properties
    cluster.env["DATACLAY_PASSWORD"] = "not-the-password"
    try:
        wrong = cluster.run_client("from dataclay import api; api.init()", check=False)
        wrong_client = cluster.run_client("from dataclay import Client; Client().start()", check=False)
        wrong_cmd = cluster.dataclaycmd("GetBackends", cluster.admin_user(), "-", check=False)
    finally:
        del cluster.env["DATACLAY_PASSWORD"]
    for result in (wrong, wrong_client):
        assert result.returncode == 1 and "NotAuthenticatedError: wrong username or password" in result.stderr
        assert _frames(result.stderr) == 2, result.stderr
    assert wrong_cmd.returncode == 1 and wrong_cmd.stderr.strip() == "dataclaycmd GetBackends: wrong username or password"

    # all up: status exits 0
    made = client(cluster, """
        p = Person("pat", 7); p.make_persistent(alias="pat")
        print(json.dumps({}))
    """)
    assert made == {}
    up = cluster.dataclay("status", "--json")
    assert up.returncode == 0 and json.loads(up.stdout)["health"] == "up"

    # the backend is gone: a call on a proxy says which backend and what to do; status exits 3
    cluster.kill("backend-1")
    gone = cluster.run_client(textwrap.dedent("""
        from dataclay import api
        api.init()
        from people.model import Person
        Person.get_by_alias("pat").birthday()
    """), check=False)
    assert gone.returncode == 1
    assert "BackendUnavailableError: backend backend-1" in gone.stderr, gone.stderr
    assert "'dataclay status'" in gone.stderr and "During handling" not in gone.stderr, gone.stderr
    degraded = wait_until(lambda: (status := cluster.dataclay("status", "--json")).returncode == 3 and status,
                          30, "`dataclay status` to exit 3 (degraded)", interval=0.5)
    assert json.loads(degraded.stdout)["health"] == "degraded"
    assert cluster.dataclay("status").returncode == 3

    # the cluster is stopped: every client says so and how to start one; status exits 1
    cluster.stop_processes()
    lm = f"cannot reach the Logic Module at 127.0.0.1:{cluster.port} (connection refused): is the cluster running? " \
         f"Start one with 'dataclay start'"
    stopped_init = cluster.run_client("from dataclay import api; api.init()", check=False)
    stopped_client = cluster.run_client("from dataclay import Client; Client().start()", check=False)
    stopped_cmd = cluster.dataclaycmd("GetBackends", cluster.admin_user(), "-", check=False)
    down = cluster.dataclay("status", "--json")
    for result in (stopped_init, stopped_client):
        assert result.returncode == 1 and f"BackendUnavailableError: {lm}" in result.stderr, result.stderr
        assert _frames(result.stderr) == 2 and "grpc" not in result.stderr, result.stderr
    assert stopped_cmd.returncode == 1 and stopped_cmd.stderr.startswith(f"dataclaycmd GetBackends: {lm}")
    assert down.returncode == 1 and json.loads(down.stdout)["health"] == "down"
    assert lm in json.loads(down.stdout)["problem"]
