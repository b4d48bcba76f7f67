#!/usr/bin/env python
"""Records the class-data-sharing archives of the server jars (see dataclay._internal.cli.common.class_archives).

Runs a throwaway local cluster (two kv backends) with DATACLAY_CLASS_ARCHIVES=record, drives the
calls every start and a typical program make (models, make_persistent, aliases, methods, replicas,
versions, status), stops it cleanly: each JVM writes the archive of the classes it loaded as it
exits. Does nothing while every archive is newer than its jar. `make build` runs it."""
from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import textwrap

from dataclay._internal.cli.common.class_archives import archive_of, fresh, recording_of
from dataclay._internal.cli.common.cluster_state import free_port
from dataclay._internal.cli.local.launcher import DS_JAR, LM_JAR

REPO = pathlib.Path(__file__).resolve().parents[1]
JARS = REPO / "pyclay" / "dataclay" / "_internal" / "jars"
MODEL = REPO / "examples" / "wordcount" / "model"
BIN = pathlib.Path(sys.executable).parent
SERVER_JARS = (LM_JAR, DS_JAR)

WORKLOAD = textwrap.dedent("""
    from dataclay import api
    api.init()
    from WordCount.classes import Text, TextCollection, TextStats
    backends = sorted(api.get_backends())
    texts = TextCollection()
    texts.make_persistent(alias="training", backend_id=backends[0])
    for backend in backends:
        text = Text("to be or not to be")
        text.make_persistent(backend_id=backend)
        texts.add_text(text)
        text.word_count()
    stats = TextStats({})
    stats.make_persistent(backend_id=backends[-1])
    stats.merge_word_counts({"be": 2})
    stats.top_words(1)
    TextCollection.get_by_alias("training").texts
    stats.new_replica(backend_id=backends[0])
    version = stats.new_version()
    version.merge_word_counts({"or": 1})
    version.consolidate_version()
    api.finish()
""")


def _run(args: list[str], env: dict, timeout: float = 180) -> None:
    result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:3])} failed:\n{result.stdout}{result.stderr}")


def stale(jars: pathlib.Path) -> list[str]:
    """The server jars whose archive is missing or older than the jar."""
    return [name for name in SERVER_JARS if not fresh(jars / name)]


def record(jars: pathlib.Path) -> None:
    """Runs the training cluster and puts the archives in place."""
    home = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-class-archives-"))
    shm = pathlib.Path("/dev/shm")
    pools = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-class-archives-", dir=shm if shm.is_dir() else None))
    env = {k: v for k, v in os.environ.items() if not k.startswith("DATACLAY_")}
    env.update(DATACLAY_HOME=str(home), DATACLAY_PORT=str(free_port()), DATACLAY_STORE_PATH=str(pools),
               DATACLAY_STORE_SIZE="64M", DATACLAY_JARS=str(jars), DATACLAY_CLASS_ARCHIVES="record",
               DATACLAY_GC_INTERVAL="0", PYTHONPATH=os.pathsep.join(filter(None, [str(MODEL), env.get("PYTHONPATH")])))
    for name in SERVER_JARS:
        recording_of(jars / name).unlink(missing_ok=True)
    try:
        _run([str(BIN / "dataclay"), "start", "--backends", "2", "--store", "kv"], env)
        user = next(line.split("=", 1)[1] for line in (home / "client.properties").read_text().splitlines()
                    if line.startswith("DATACLAY_USER="))
        _run([str(BIN / "dataclaycmd"), "NewModel", user, "-", "WordCount", str(MODEL), "python"], env)
        _run([sys.executable, "-c", WORKLOAD], env)
        _run([str(BIN / "dataclay"), "status"], env)
    finally:
        _run([str(BIN / "dataclay"), "stop"], env)  # each JVM writes its archive as it exits
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(pools, ignore_errors=True)
    for name in SERVER_JARS:
        recorded = recording_of(jars / name)
        if not recorded.exists() or recorded.stat().st_size == 0:
            raise RuntimeError(f"the JVM of {name} wrote no class archive at {recorded}")
        recorded.chmod(0o644)  # a build artefact for every user of the jars (servers run with umask 077)
        recorded.replace(archive_of(jars / name))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jars", type=pathlib.Path, default=JARS, help="directory of the server jars")
    args = parser.parse_args()
    todo = stale(args.jars)
    if not todo:
        print("class archives: up to date")
        return 0
    try:
        record(args.jars)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"class archives: recording failed: {e}", file=sys.stderr)
        return 1
    print(f"class archives: recorded for {', '.join(SERVER_JARS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
