"""The import rules in .importlinter hold: the CLI's command families are layered, the client core
imports neither the CLI nor the execution environment, and only the rpc wrappers (and the modules
frozen there) import the generated protocol modules."""
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_imports_keep_every_contract_in_importlinter():
    # setup: the lint-imports of this virtualenv, reading the source tree (not an installed copy)
    lint_imports = pathlib.Path(sys.executable).parent / "lint-imports"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "pyclay")}

    # run: without a cache, which would be written into the repository
    done = subprocess.run([str(lint_imports), str(ROOT / ".importlinter"), "--no-cache"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)

    # verify
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout
