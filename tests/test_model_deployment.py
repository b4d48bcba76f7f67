"""Models on a real cluster: usable on every backend once `dataclaycmd NewModel` returns, and on a
backend that restarts before it serves a single call for one of their classes."""
import json
import textwrap
import threading
import time

from harness.models import one_field_model, write_model
from test_core_acceptance import PRELUDE

# Waits for a go file, then makes one object of each listed class on every backend at once.
RACER = PRELUDE + textwrap.dedent("""
    import importlib, os, time
    go, names = sys.argv[1], sys.argv[2:]
    backends = sorted(api.get_backends())
    while not os.path.exists(go):
        time.sleep(0.002)
    made = []
    for name in names:
        module, cls = name.rsplit(".", 1)
        for b in backends:
            obj = getattr(importlib.import_module(module), cls)(7)
            obj.make_persistent(backend_id=b)
            made.append(obj.value())
    print(json.dumps({"made": made}))
""")

# Makes Counters on one backend until told to stop; a transient BACKEND_UNAVAILABLE is retried,
# any other error ends the run and is reported.
PERSISTER = PRELUDE + textwrap.dedent("""
    import os
    from dataclay.exceptions import BackendUnavailableError
    backend, stop = sys.argv[1], sys.argv[2]
    made, unavailable = 0, 0
    while not os.path.exists(stop):
        try:
            Counter(made).make_persistent(backend_id=backend)
            made += 1
        except BackendUnavailableError:
            unavailable += 1
    print(json.dumps({"made": made, "unavailable": unavailable}))
""")


def _model(root, namespace: str) -> str:
    """Writes a model package `namespace` under `root` (its class path); returns its class name."""
    write_model(root, namespace, one_field_model("Thing", "size", "int", "value", "int", "self.size"), module="thing")
    return f"{namespace}.thing.Thing"


def test_a_model_is_usable_on_every_backend_as_soon_as_new_model_returns(make_cluster, tmp_path):
    # setup: a client already connected, waiting to use the models the moment they are registered
    cluster = make_cluster()
    roots = [tmp_path / f"models{i}" for i in range(4)]
    names = [_model(root, f"fresh{i}") for i, root in enumerate(roots)]
    cluster.env["PYTHONPATH"] = ":".join([*map(str, roots), cluster.env["PYTHONPATH"]])
    go = tmp_path / "go"
    racer = cluster.popen_client(RACER, str(go), *names)
    try:
        # run
        for name, root in zip(names, roots):
            cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", name.split(".")[0], str(root), "python")
        go.touch()
        out, err = racer.communicate(timeout=120)
    finally:
        racer.kill()
    # verify
    assert racer.returncode == 0, err
    assert json.loads(out.strip().splitlines()[-1]) == {"made": [7] * 8}


def test_a_restarted_backend_makes_calls_wait_for_its_models_instead_of_refusing_them(make_cluster, tmp_path):
    # setup
    cluster = make_cluster()
    backend = json.loads(cluster.run_client(PRELUDE + textwrap.dedent("""
        print(json.dumps(sorted(api.get_backends(), key=lambda b: api.get_backends()[b].name)[0]))
    """)).stdout.strip().splitlines()[-1])
    stop = tmp_path / "stop"
    persister = cluster.popen_client(PERSISTER, backend, str(stop))
    errors = []
    drain = threading.Thread(target=lambda: errors.extend(persister.stderr), daemon=True)
    drain.start()
    try:
        # run: backend-1 dies and comes back (on the same port) three times under a stream of calls
        for _ in range(3):
            time.sleep(1.0)
            cluster.kill("backend-1")
            cluster.start()
        time.sleep(1.0)
        stop.touch()
        out = persister.stdout.read()
        persister.wait(timeout=60)
    finally:
        stop.touch()
        persister.kill()
    drain.join(timeout=10)
    # verify: every call was either served or refused as unavailable; none found its class missing
    assert persister.returncode == 0, "".join(errors)
    counts = json.loads(out.strip().splitlines()[-1])
    assert counts["made"] > 0, counts
