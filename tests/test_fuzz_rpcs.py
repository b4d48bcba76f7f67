"""The short fuzzing run (the long one: tests/fuzz/README.md): every RPC of both services under
every identity, mutated and generated messages plus the whole crafted pickle and Kryo corpus,
against a real two-backend cluster. No server dies or grows without bound, every refusal is a
typed dataClay error, no payload runs code, no secret leaks and good calls keep being answered."""
import os
import pathlib
import signal
import time

from fuzz.campaign import Campaign
from fuzz.identities import NAMES
from fuzz.rpcs import rpcs
from fuzz.run import HEAP
from fuzz.world import prepare


def test_fuzzed_messages_to_every_rpc_get_typed_answers_and_break_nothing(make_cluster, tmp_path):
    # a bounded Java heap: what a server retains, or a claim it allocates, shows as an OutOfMemoryError
    cluster = make_cluster(extra_env={"DATACLAY_JAVA_OPTS": f"-Xmx{HEAP}"})
    world = prepare(cluster, tmp_path)
    campaign = Campaign(cluster, world, seed=7)
    try:
        report = campaign.run(messages_per_service=600, seconds=300)
        print(report.summary())
        assert not report.problems, report.summary()
        for service in ("LogicModule", "DataService"):
            assert report.sent[service] >= 300, report.summary()
            for rpc in rpcs(service):
                assert {ident for (name, ident) in report.by_rpc if name == str(rpc)} == set(NAMES), str(rpc)
        assert report.corpus["pickle"] > 100 and report.corpus["kryo"] > 50
        assert report.checks > 20

        # the oracle itself: it sees a payload that ran code, a stack trace in a log, an environment
        # that exited unasked, and model code that read what it should not (here a system file the
        # sandbox does expose, standing in for an escape)
        campaign.oracle._escapes.append(("read", "/usr/lib/os-release"))
        world.marker.touch()
        log = sorted((cluster.home / "logs").glob("backend-1*.log"))[0]
        with log.open("a") as f:
            f.write("2026-01-01 00:00:00 SEVERE io.dataclay.Fake: injected by the test\n")
        ee = cluster.ee_pid("backend-2")
        os.kill(ee, signal.SIGKILL)
        deadline = time.monotonic() + 10
        found = ""
        while "exited with code" not in found and time.monotonic() < deadline:
            found += "\n".join(campaign.oracle.check())
            time.sleep(0.1)
        assert "ran code" in found and "injected by the test" in found, found
        assert "model code escaped: read('/usr/lib/os-release',)" in found, found
        assert "backend-2.log" in found and "exited with code" in found, found
    finally:
        campaign.close()
        pathlib.Path(world.marker).unlink(missing_ok=True)
