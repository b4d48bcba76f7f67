"""Shared fixtures of pyclay's unit tests: the unit-test models directory and real in-process
gRPC peers (see peers.py)."""
import pathlib
import sys

import pytest

MODEL_ROOT = pathlib.Path(__file__).resolve().parent / "model_root"
sys.path.insert(0, str(MODEL_ROOT))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))


@pytest.fixture
def models_dir() -> pathlib.Path:
    """The directory holding the `unitmodels` package, as an execution environment's models dir."""
    return MODEL_ROOT
