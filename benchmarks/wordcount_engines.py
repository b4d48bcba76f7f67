#!/usr/bin/env python
"""The NEXTGenIO wordcount figure on this machine: for each store engine, a fresh two-backend
cluster, then the time to read the text files and make them persistent (round robin over the
backends, plus the TextCollection under an alias) and the time of the white paper's count_words
(each text counts its words in the backend that stores it, the partial results are merged into
a persistent TextStats). Plain Python runs the same model code on local objects with no store.
PostgreSQL runs with fsync on; pmem engines use pools under /dev/shm with PMEM_IS_PMEM_FORCE=1."""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

from _cluster import REPO, Cluster
from harness.postgres import PostgresServer  # the harness is importable once _cluster is

from dataclay._internal import engines as engine_view

MODEL = REPO / "examples" / "wordcount" / "model"
sys.path.insert(0, str(MODEL.parent))
from prepare import generated_texts  # the example's own text generator, importable once on the path

# every engine, the memory-only baseline first (the others are compared with it)
ENGINES = tuple(e.name for e in sorted(engine_view.ENGINES, key=lambda e: e.durable))
BASELINE = ENGINES[0]

# One run in a client process: prints {"persist": s, "execute": s, "top": [...]}.
RUN = """
import json, pathlib, sys, time
persistent = sys.argv[2] == "store"
if persistent:
    from dataclay import api
    api.init()
from WordCount.classes import Text, TextCollection, TextStats

def count_words(text_collection):
    result = TextStats(dict())
    if persistent:
        result.make_persistent()
    for text in text_collection.texts:
        partial = text.word_count()
        result.merge_word_counts(partial)
    return result

start = time.perf_counter()
files = sorted(pathlib.Path(sys.argv[1]).iterdir())
texts = [Text(f.read_text()) for f in files]
if persistent:
    backends = sorted(api.get_backends())
    for i, text in enumerate(texts):
        text.make_persistent(backend_id=backends[i % len(backends)])
    TextCollection(texts).make_persistent(alias="Words", backend_id=backends[0])
    words = TextCollection.get_by_alias("Words")
else:
    words = TextCollection(texts)
persisted = time.perf_counter()
top = count_words(words).top_words(10)
done = time.perf_counter()
print(json.dumps({"persist": persisted - start, "execute": done - persisted, "top": top}))
"""


def write_texts(directory: pathlib.Path, count: int, size: int, seed: int) -> None:
    """`count` files of about `size` bytes of Zipf-distributed words (the same for every engine): the
    example's generated texts, from a larger vocabulary drawn in larger chunks."""
    for n, text in enumerate(generated_texts(count, size, seed, vocabulary_size=50000, draw=65536)):
        (directory / f"text-{n:03d}.txt").write_text(text)


def run_client(env: dict, texts: pathlib.Path, mode: str) -> dict:
    env = dict(env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(MODEL), env.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-c", RUN, str(texts), mode], env=env, capture_output=True,
                            text=True, timeout=3600)
    if result.returncode != 0:
        raise RuntimeError(f"wordcount failed:\n{result.stdout}\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def run_engine(engine: str, texts: pathlib.Path, postgres: PostgresServer | None) -> dict:
    extra = {}
    if engine_view.engine(engine).database:
        extra["DATACLAY_STORE_URL"] = postgres.create_database(f"wordcount_{int(time.time() * 1000)}")
    cluster = Cluster(backends=2, store=engine, store_size="2G", extra_env=extra)
    try:
        cluster.start()
        cluster.register_models(namespace="WordCount", path=MODEL)
        return run_client(cluster.env, texts, "store")
    finally:
        cluster.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=16)
    parser.add_argument("--size-mib", type=int, default=8)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--rounds", type=int, default=1, help="runs per engine (the median is reported)")
    args = parser.parse_args()
    engines = [e for e in args.engines.split(",") if e]
    unknown = set(engines) - set(ENGINES)
    if unknown:
        parser.error(f"unknown engines {sorted(unknown)}; valid: {', '.join(ENGINES)}")

    work = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-wordcount-"))
    postgres = PostgresServer(durable=True).start() if any(engine_view.engine(e).database for e in engines) else None
    try:
        texts = work / "texts"
        texts.mkdir()
        write_texts(texts, args.files, args.size_mib << 20, seed=7)
        print(f"{args.files} files of {args.size_mib} MiB, 2 backends, median of {args.rounds} run(s)")
        results = {"plain Python": [run_client(dict(os.environ), texts, "plain") for _ in range(args.rounds)]}
        for engine in engines:
            results[engine] = [run_engine(engine, texts, postgres) for _ in range(args.rounds)]
        tops = {json.dumps(r["top"]) for runs in results.values() for r in runs}
        assert len(tops) == 1, f"engines disagree on the top words: {tops}"
        base = None
        print(f"{'run':<14}{'prepare+persist s':>18}{'execute s':>11}{'total s':>9}{'vs ' + BASELINE:>11}")
        medians = {}
        for name, runs in results.items():
            persist = sorted(r["persist"] for r in runs)[len(runs) // 2]
            execute = sorted(r["execute"] for r in runs)[len(runs) // 2]
            medians[name] = (persist, execute)
        base = sum(medians[BASELINE]) if BASELINE in medians else None
        for name, (persist, execute) in medians.items():
            ratio = f"{(persist + execute) / base - 1:+10.1%}" if base else ""
            print(f"{name:<14}{persist:>18.2f}{execute:>11.2f}{persist + execute:>9.2f} {ratio}")
    finally:
        if postgres:
            postgres.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
