"""Shared fixtures of pyclay's unit tests: the unit-test models directory and real in-process
gRPC peers (see peers.py)."""
import pathlib
import sys

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
