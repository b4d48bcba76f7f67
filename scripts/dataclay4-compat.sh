#!/bin/bash
# Runs dataClay 4's own functional tests and examples, unchanged, against local clusters of this
# project, from outside it: the tests' docker-compose is replaced by a fixture that starts
# `dataclay start --backends 3` and registers the tests' models, as a dataClay 4 user would.
#
#   scripts/dataclay4-compat.sh /path/to/dataclay-checkout [pytest args...]
#
# The checkout is bsc-dom/dataclay at tag 4.3.1 (its tests/functional, src/dataclay/contrib/modeltest
# and examples). Nothing of it is copied into this project. Needs network access to PyPI once, for
# the tests' own dependencies (pytest-asyncio, pydantic) in a virtualenv of its own.
set -euo pipefail
UPSTREAM=$(cd "${1:?usage: $0 /path/to/dataclay-4.3.1-checkout [pytest args...]}" && pwd)
shift
REPO=$(cd "$(dirname "$0")/.." && pwd)
# Not under /tmp, which confined model code never sees: its Python must be reachable by the backends'
# environments (under a uid of their own when the servers run as root)
WORK=$(mktemp -d "$REPO/.dataclay4-compat.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
chmod 755 "$WORK"
for need in tests/functional src/dataclay/contrib/modeltest examples/quickstart; do
  [ -e "$UPSTREAM/$need" ] || { echo "$UPSTREAM has no $need: is it a dataclay 4.3.1 checkout?" >&2; exit 2; }
done

python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q -r "$REPO/requirements.txt" pytest pytest-asyncio pydantic
"$WORK/venv/bin/pip" install -q --no-deps -e "$REPO"
BIN=$WORK/venv/bin

# The tests' models, where dataclay.contrib.<name> packages may live (outside the dataclay package)
mkdir -p "$WORK/models/dataclay/contrib"
cp -r "$UPSTREAM/src/dataclay/contrib/modeltest" "$WORK/models/dataclay/contrib/"
mkdir -p "$WORK/tests"
cp "$UPSTREAM"/tests/functional/*.py "$WORK/tests/"
cat > "$WORK/conftest.py" <<'PY'
import os, pathlib, shutil, socket, subprocess, sys, tempfile
import pytest

MODELS = pathlib.Path(__file__).parent / "models"
sys.path.append(str(MODELS))  # dataClay 4 ships dataclay.contrib.modeltest: here it is a registered model
BIN = pathlib.Path(sys.executable).parent


@pytest.fixture(scope="session")
def mds_connection():
    home = pathlib.Path(tempfile.mkdtemp(prefix="dc4-home-"))
    pools = pathlib.Path(tempfile.mkdtemp(prefix="dc4-pools-", dir="/dev/shm"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATACLAY_", "DC_"))}
    env.update({"DATACLAY_HOME": str(home), "DATACLAY_PORT": str(port), "DATACLAY_STORE_PATH": str(pools),
                "DATACLAY_STORE_SIZE": "256M"})
    try:
        subprocess.run([str(BIN / "dataclay"), "start", "--backends", "3"], env=env, check=True)
        props = dict(line.split("=", 1) for line in (home / "client.properties").read_text().splitlines()
                     if "=" in line and not line.startswith("#"))
        subprocess.run([str(BIN / "dataclaycmd"), "NewModel", props["DATACLAY_USER"], props["DATACLAY_PASSWORD"],
                        "modeltest", str(MODELS), "python"], env=env, check=True, stdout=subprocess.DEVNULL)
        # dataClay 4's client fixture logs in with its defaults: here, the cluster's administrator
        os.environ.update({"DC_USERNAME": props["DATACLAY_USER"], "DC_PASSWORD": props["DATACLAY_PASSWORD"]})
        yield "127.0.0.1", port
    finally:
        subprocess.run([str(BIN / "dataclay"), "stop"], env=env, capture_output=True)
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(pools, ignore_errors=True)
PY
printf '[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = session\ntestpaths = tests\n' > "$WORK/pytest.ini"

echo "== dataClay 4.3.1 functional tests"
tests_status=0
(cd "$WORK" && "$BIN/python" -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning "$@") || tests_status=$?

echo "== dataClay 4.3.1 examples"
export DATACLAY_HOME=$WORK/home DATACLAY_STORE_PATH=$(mktemp -d -p /dev/shm)
DATACLAY_PORT=$("$BIN/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export DATACLAY_PORT
export DATACLAY_MIN_PASSWORD_LENGTH=6  # the examples' accounts have six-character passwords
mkdir -m 700 -p "$DATACLAY_HOME"
trap '"$BIN/dataclay" stop >/dev/null 2>&1; rm -rf "$WORK" "$DATACLAY_STORE_PATH"' EXIT
"$BIN/dataclay" start --backends 2 >/dev/null
ADMIN=$(grep ^DATACLAY_USER= "$DATACLAY_HOME/client.properties" | cut -d= -f2)
ADMIN_PASSWORD=$(grep ^DATACLAY_PASSWORD= "$DATACLAY_HOME/client.properties" | cut -d= -f2)
cmd() { DATACLAY_PASSWORD=$ADMIN_PASSWORD "$BIN/dataclaycmd" "$@" >/dev/null; }
EX=$UPSTREAM/examples
cmd NewModel "$ADMIN" - modeltest "$WORK/models" python
cmd NewModel "$ADMIN" - quickstart "$EX/quickstart" python
cmd NewModel "$ADMIN" - stub "$EX/stub" python
# the examples' accounts and datasets, as their docker-compose makes them; dataClay 4 lets every
# account use every object, so testuser1 gets a contract on testuser's dataset
for spec in testuser:s3cret:testdata testuser1:s3cret1:testdata1; do
  IFS=: read -r name pass dataset <<<"$spec"
  DATACLAY_NEW_PASSWORD=$pass cmd NewAccount "$name" -
  cmd NewDataset "$ADMIN" - "$dataset"
  cmd NewDataContract "$ADMIN" - "$dataset" "$name"
done
cmd NewDataContract "$ADMIN" - testdata testuser1
DATACLAY_NEW_PASSWORD=s3cret cmd NewAccount test -
examples_status=0
example() {  # name, directory, environment...
  local name=$1 dir=$2; shift 2
  if (cd "$dir" && env -u DATACLAY_PASSWORD "$@" PYTHONPATH="$WORK/models" "$BIN/python" client.py) \
      >"$WORK/$name.out" 2>&1; then
    echo "ok   $name"
  else
    echo "FAIL $name"; tail -5 "$WORK/$name.out"; examples_status=1
  fi
}
AS_ADMIN=(DC_USERNAME="$ADMIN" DC_PASSWORD="$ADMIN_PASSWORD")
example quickstart "$EX/quickstart"
example async-client "$EX/async-client" "${AS_ADMIN[@]}"
example client-start-stop "$EX/client-start-stop"
example multithread-client "$EX/multithread-client" "${AS_ADMIN[@]}"
example persistence "$EX/persistence" DC_HOST=127.0.0.1 DC_PASSWORD=s3cret
example persistence-again "$EX/persistence" DC_HOST=127.0.0.1 DC_PASSWORD=s3cret
(cd "$EX/stub/isolated_client" && env -u DATACLAY_PASSWORD "${AS_ADMIN[@]}" "$BIN/python" client.py) \
  >"$WORK/stub.out" 2>&1 && echo "ok   stub" || { echo "FAIL stub"; tail -5 "$WORK/stub.out"; examples_status=1; }
[ "$tests_status" -eq 0 ] && [ "$examples_status" -eq 0 ]
