"""Shared fixtures of pyclay's unit tests: the unit-test models directory and real in-process
gRPC peers (see peers.py)."""
import pathlib
import sys
from types import SimpleNamespace

import pytest

MODEL_ROOT = pathlib.Path(__file__).resolve().parent / "model_root"
sys.path.insert(0, str(MODEL_ROOT))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
# tests/harness/waiting.py, the one deadline helper of both test suites (pytest.ini puts tests/ on the
# path too; this keeps `pytest pyclay/tests` working from any directory)
_SHARED = pathlib.Path(__file__).resolve().parents[2] / "tests"
if str(_SHARED) not in sys.path:
    sys.path.append(str(_SHARED))


@pytest.fixture
def models_dir() -> pathlib.Path:
    """The directory holding the `unitmodels` package, as an execution environment's models dir."""
    return MODEL_ROOT


@pytest.fixture
def config_without_credentials(tmp_path, monkeypatch) -> pathlib.Path:
    """A client file naming a port and no account, with DATACLAY_USER and DATACLAY_PASSWORD unset:
    a configuration every init must refuse."""
    monkeypatch.delenv("DATACLAY_USER", raising=False)
    monkeypatch.delenv("DATACLAY_PASSWORD", raising=False)
    config = tmp_path / "client.properties"
    config.write_text("DATACLAY_PORT=1\n")
    return config


@pytest.fixture
def peer_cluster(tmp_path, monkeypatch):
    """Starts, when called with a Data Service peer class and a count, a Logic Module peer and that
    many Data Service peers, and writes a client file reaching them as alice (`.config`), with the
    DATACLAY_* variables that would override it cleared. Afterwards the client is finished and every
    peer stopped."""
    from dataclay import api
    from peers import LogicModulePeer

    for key in ("DATACLAY_HOST", "DATACLAY_PORT", "DATACLAY_USER", "DATACLAY_PASSWORD", "DATACLAY_DATASET",
                "DATACLAY_HOME", "DATACLAY_PICKLE_ALLOW", "DATACLAY_TLS_CA"):
        monkeypatch.delenv(key, raising=False)
    started = []

    def start(peer_class, backends: int) -> SimpleNamespace:
        lm = LogicModulePeer()
        started.append(lm)
        peers = [peer_class(lm) for _ in range(backends)]
        started.extend(peers)
        config = tmp_path / "client.properties"
        config.write_text(f"DATACLAY_HOST=127.0.0.1\nDATACLAY_PORT={lm.port}\nDATACLAY_USER=alice\n"
                          f"DATACLAY_PASSWORD=secret\n")
        return SimpleNamespace(lm=lm, ds=peers, config=config)

    yield start
    api.finish()
    for peer in reversed(started):
        peer.stop()
