"""The peer benchmark (benchmarks/peers.py) runs at a tiny size and prints every row: the warm
figures of each system and operation, the targets, the just-started figures and the concurrency
runs. Its figures are benchmarks, not test assertions: this only checks that it runs."""
import os
import re
import subprocess
import sys

from harness.cluster import REPO

SYSTEMS = ("pmclay", "redis", "zodb", "zeo")
OPERATIONS = ("update", "read", "field")


def test_peer_benchmark_runs_at_a_tiny_size_and_prints_every_row():
    # setup
    env = {k: v for k, v in os.environ.items() if not k.startswith("DATACLAY_")}
    # run
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "peers.py"), "-n", "200", "--warmup", "200",
                             "--rounds", "2", "--just-started", "50", "--clients", "1,2", "--seconds", "0.5",
                             "--load-warmup", "50"], env=env, capture_output=True, text=True, timeout=240)
    # verify
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for op in OPERATIONS:
        for system in SYSTEMS:
            assert re.search(rf"^  {op} +{system} +[\d,]+ +[\d,]+ +x[\d.]+ +x[\d.]+  \S", out, re.M), (op, system, out)
        assert re.search(rf"^  {op} +pmclay p50 / Redis p50 +x[\d.]+ +target <= [\d.]+ +(met|MISSED)$", out, re.M), out
    for system in SYSTEMS:
        assert re.search(rf"^  {system} +start-up +[\d.]+ s$", out, re.M), (system, out)
    for op in OPERATIONS:
        assert len(re.findall(rf"^    {op} +first 50: p50 +[\d,]+ us", out, re.M)) == len(SYSTEMS), (op, out)
    for system, kinds in {"pmclay": ("logic module", "data service", "environment"), "redis": ("redis-server",),
                          "zeo": ("runzeo",)}.items():
        for clients in (1, 2):
            row = re.search(rf"^  {system} +{clients} clients +([\d,]+) calls/s .*CPU us/call: (.*) sum ([\d,]+)$",
                            out, re.M)
            assert row, (system, clients, out)
            assert int(row.group(1).replace(",", "")) > 0
            assert all(f"{kind} " in row.group(2) for kind in (*kinds, "clients")), row.group(0)
