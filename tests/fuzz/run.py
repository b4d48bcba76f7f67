"""The long fuzzing run: starts its own local cluster (two backends, engine of your choice),
prepares it, fuzzes both services and prints the report. Exit status 1 when anything was found.

    cd tests && ../.venv/bin/python -m fuzz.run --messages 10000 --seed 1 [--store kv] [--heap 384m] [--report out.txt]
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile

from harness.cluster import Cluster

from fuzz.campaign import Campaign
from fuzz.world import prepare

HEAP = "384m"


def fuzz_cluster(cluster: Cluster, messages: int, seed: int, seconds: float | None = None):
    """Prepares a started cluster (test models registered), fuzzes it and returns the report."""
    world = prepare(cluster, pathlib.Path(tempfile.mkdtemp(prefix="dataclay-fuzz-")))
    campaign = Campaign(cluster, world, seed=seed)
    try:
        return campaign.run(messages, seconds)
    finally:
        campaign.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.run", description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000, help="messages per service (default 10000)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--store", default="kv", help="storage engine of the backends (default kv)")
    parser.add_argument("--heap", default=HEAP, help=f"Java heap limit of the servers (default {HEAP}): what a "
                        "server retains, or a claim it allocates, shows as an OutOfMemoryError")
    parser.add_argument("--report", type=pathlib.Path, help="also write the report to this file")
    args = parser.parse_args(argv)
    if args.messages < 1:
        parser.error("--messages must be at least 1")
    cluster = Cluster(backends=2, store=args.store, extra_env={"DATACLAY_JAVA_OPTS": f"-Xmx{args.heap}"})
    try:
        cluster.start()
        cluster.register_models()
        report = fuzz_cluster(cluster, args.messages, args.seed)
    finally:
        cluster.stop()
    text = report.summary()
    print(text)
    if args.report:
        args.report.write_text(text + "\n")
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
