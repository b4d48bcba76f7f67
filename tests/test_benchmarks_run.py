"""The peer benchmark (benchmarks/peers.py) runs at a tiny size and prints every row: the warm
figures of each system and operation, the targets, the just-started figures and the concurrency
runs. The Figure 13 benchmark (wordcount_engines.py) runs at a tiny size and draws its figure.
InterceptorCost.java compiles against the servers' jar and runs, and so do transport_floor.py and
first_calls.py (also on a Slurm job's cluster). Their figures are benchmarks, not test assertions:
this only checks that they run."""
import json
import os
import re
import subprocess
import sys

from matplotlib import image

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


def test_figure_13_benchmark_runs_at_a_tiny_size_and_draws_its_figure(tmp_path):
    # setup
    env = {k: v for k, v in os.environ.items() if not k.startswith("DATACLAY_")}
    png, kept = tmp_path / "figure13.png", tmp_path / "figure13.json"
    # run
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "wordcount_engines.py"), "--sizes-mib", "1",
                             "--files", "2", "--engines", "memory,kv", "--rounds", "2", "--png", str(png), "--json",
                             str(kept)],
                            env=env, capture_output=True, text=True, timeout=240)
    # verify
    assert result.returncode == 0, result.stdout + result.stderr
    for run in ("plain Python", "memory", "kv"):
        assert re.search(rf"^  {run} +[\d.]+ +[\d.]+ +[\d.]+ +[+-][\d.]+% +[\d.]+$", result.stdout, re.M), result.stdout
    # each round's totals, their spread and each round against that round's memory run
    assert "  2 rounds: total s per round" in result.stdout, result.stdout
    for run in ("plain Python", "memory", "kv"):
        assert re.search(rf"^  {run} +[\d.]+ +[\d.]+   spread +[\d.]+%   [+-][\d.]+%  [+-][\d.]+%$", result.stdout,
                         re.M), result.stdout
    figures = json.loads(kept.read_text())["sizes"]["1"]
    assert figures["files"] == 2 and set(figures["runs"]) == {"plain Python", "memory", "kv"}, figures
    assert all(len(run["totals"]) == 2 for run in figures["runs"].values()), figures
    pixels = image.imread(png)
    assert pixels.shape[0] > 300 and pixels.shape[1] > 600 and pixels.std() > 0.05, pixels.shape


def test_metrics_cost_benchmark_runs_at_a_tiny_size_and_prints_each_block():
    # setup
    env = {k: v for k, v in os.environ.items() if not k.startswith("DATACLAY_")}
    # run
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "metrics_cost.py"), "-n", "100", "--warmup",
                             "50", "--rounds", "2", "--scrape-interval", "0.2", "--scrapes", "5"],
                            env=env, capture_output=True, text=True, timeout=240)
    # verify
    assert result.returncode == 0, result.stdout + result.stderr
    for side in ("idle", "scraped"):
        for what in ("changes state", "reads state"):
            rows = re.findall(rf"^    {side} +active method, {what} +p50 +[\d.]+ us +p99 +[\d.]+ us", result.stdout, re.M)
            assert len(rows) == 2, (side, what, result.stdout)
    for server in ("logicmodule", "backend-1"):
        assert re.search(rf"^    scrape of the {server} +[\d.]+ KiB: +[\d.]+ ms wall, +[\d.]+ ms of the server's CPU",
                         result.stdout, re.M), result.stdout


def test_tracing_cost_benchmark_runs_at_a_tiny_size_and_traces_only_what_it_samples():
    # setup
    env = {k: v for k, v in os.environ.items() if not k.startswith("DATACLAY_")}
    # run
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "tracing_cost.py"), "-n", "100", "--warmup",
                             "50", "--rounds", "1"], env=env, capture_output=True, text=True, timeout=240)
    # verify: every block's rows, and spans only from the sampled blocks
    assert result.returncode == 0, result.stdout + result.stderr
    for block in ("untraced", "scraped", "traced 1 %", "traced 100 %"):
        for what in ("changes state", "reads state"):
            assert re.search(rf"^    {block} +{what} +p50 +[\d.]+ us +p99 +[\d.]+ us", result.stdout, re.M), \
                (block, what, result.stdout)
    per_call = dict(re.findall(r"(untraced|scraped|traced 100 %) ([\d.]+)", result.stdout.split("spans received")[1]))
    assert float(per_call["untraced"]) == 0 and float(per_call["scraped"]) == 0, result.stdout
    assert float(per_call["traced 100 %"]) >= 3, result.stdout


def test_interceptor_cost_benchmark_compiles_and_runs_every_server(tmp_path):
    # setup: compiled against the data service's jar, as its README says
    jar = REPO / "pyclay" / "dataclay" / "_internal" / "jars" / "dataservice.jar"
    subprocess.run(["javac", "-d", str(tmp_path), "-cp", str(jar), str(REPO / "benchmarks" / "java" /
                                                                        "InterceptorCost.java")], check=True, timeout=120)
    # run
    result = subprocess.run(["java", "-cp", f"{tmp_path}:{jar}", "InterceptorCost", "2000", "1"],
                            capture_output=True, text=True, timeout=120)
    # verify: a round with every server, every call counted, and the 100 % server's spans exported
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ContextStorageOverride" in result.stdout.splitlines()[0], result.stdout
    round_1 = next(line for line in result.stdout.splitlines() if line.startswith("round 1:"))
    for server in ("bare", "RpcMetrics", "tracing, sampler off", "tracing 1 %", "tracing 100 %"):
        assert re.search(rf"  {server} \d+/\d+", round_1), (server, round_1)
    assert "calls counted by RpcMetrics: {Echo=4000}" in result.stdout, result.stdout
    assert int(re.search(r"spans exported: ([\d,]+)", result.stdout).group(1).replace(",", "")) >= 4000


def test_transport_floor_benchmark_runs_every_transport_at_a_tiny_size():
    # run: it compiles TransportFloor.java against the data service's jar and starts it itself
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "transport_floor.py"), "-n", "200",
                             "--warmup", "200", "--rounds", "3"], cwd=REPO / "benchmarks", capture_output=True,
                            text=True, timeout=180)
    # verify: every transport answered every call of every round, with a figure per round and its CPU
    assert result.returncode == 0, result.stdout + result.stderr
    for transport in ("gRPC unary", "gRPC stream", "framed socket"):
        row = next(line for line in result.stdout.splitlines() if line.startswith(transport + " "))
        # three p50s, three p99s, the client's CPU (calling thread + others), the server's
        assert re.fullmatch(r"(\s+\d+){7} \(\s*\d+ \+\s+\d+\)\s+\d+", row[len(transport):]), row
    assert "median p50 framed socket / gRPC unary: x" in result.stdout, result.stdout


def test_call_anatomy_runs_at_a_tiny_size_and_splits_the_data_services_cpu_by_thread():
    # setup: the harness passes no DATACLAY_* variable of this process on
    env = {k: v for k, v in os.environ.items() if not k.startswith("DATACLAY_")}
    # run
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "call_anatomy.py"), "-n", "100", "--warmup",
                             "100", "--rounds", "1", "--threads"], cwd=REPO / "benchmarks", env=env,
                            capture_output=True, text=True, timeout=240)
    # verify: every row, with its CPU per process and per Data Service thread kind
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    split_at = next(i for i, line in enumerate(lines) if line.startswith("Data Service CPU us per call by thread"))
    header = re.split(r"\s{2,}", lines[split_at].split(":", 1)[1].strip())
    assert header == ["network", "pool", "environment link", "GC", "JIT", "other"], lines[split_at]
    for row in ("floor", "field (store)", "get (store)", "get (environment)", "update"):
        assert any(line.startswith(row + " ") for line in lines[:split_at]), (row, result.stdout)
        split = next(line for line in lines[split_at:] if line.strip().startswith(row + " "))
        assert len(split[split.index(row) + len(row):].split()) == 6, split
    # the environment's result reader works only for the rows that reach the environment
    update = next(line for line in lines[split_at:] if line.strip().startswith("update "))
    assert int(update.split()[-4]) > 0, update


def test_first_calls_benchmark_runs_at_a_tiny_size_after_a_warm_up_and_a_training_client_and_splits_each_blocks_cpu():
    # setup: the harness passes no DATACLAY_* variable of this process on
    env = {k: v for k, v in os.environ.items() if not k.startswith("DATACLAY_")}
    # run
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "first_calls.py"), "--blocks", "3", "--block",
                             "50", "--warm", "100", "--train", "100", "--warm-up", "100"], cwd=REPO / "benchmarks", env=env, capture_output=True,
                            text=True, timeout=240)
    # verify: the training, the start, the warm figure, a row per block with its CPU per part, the target's ratios
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert any(re.fullmatch(r"dataclay start with its warm-up: [\d.]+ s", line) for line in lines), lines
    assert any(re.fullmatch(r"training: 100 updates by another client took [\d.]+ s", line) for line in lines), lines
    assert any(re.fullmatch(r"start and training to the first update answered: [\d.]+ s", line) for line in lines), lines
    assert any(re.fullmatch(r"warm \(after 250 calls\): p50 \d+ us, p99 \d+ us", line) for line in lines), lines
    header = next(line for line in lines if line.startswith("calls "))
    assert header.split("CPU us per call:")[1].split() == ["DS", "network", "DS", "pool", "DS", "environment", "link",
                                                          "DS", "GC", "DS", "JIT", "DS", "other", "environment",
                                                          "client"], header
    rows = [line for line in lines if re.match(r"\d+-\d+ ", line)]
    assert [row.split()[0] for row in rows] == ["0-49", "50-99", "100-149"], rows
    assert all(re.fullmatch(r"\S+(\s+\d+){3} \|(\s+\d+){8}", row) for row in rows), rows
    assert re.search(r"first 150 calls: p50 \d+ us \(x[\d.]+ of warm; target <= 1.3\), p99 \d+ us", result.stdout)


def test_first_calls_benchmark_runs_at_a_tiny_size_on_a_slurm_jobs_cluster():
    # setup
    env = {k: v for k, v in os.environ.items() if not k.startswith("DATACLAY_")}
    # run: a real Slurm runs a one-node job whose program is the benchmark's client
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "first_calls.py"), "--slurm", "--warm-up", "100",
                             "--blocks", "2", "--block", "50", "--warm", "100", "--job-timeout", "200"],
                            cwd=REPO / "benchmarks", env=env, capture_output=True, text=True, timeout=300)
    # verify: the job's start and warm-up, its start-up times, a row per block, the target's ratios, and its erasure
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert re.search(r"^dataclay slurm: warmed up in [\d.]+ s: 100 calls on each of 1 backend", out, re.M), out
    assert re.search(r"^batch script to the first update answered: [\d.]+ s$", out, re.M), out
    rows = [line for line in out.splitlines() if re.match(r"\d+-\d+ ", line)]
    assert [row.split()[0] for row in rows] == ["0-49", "50-99"], rows
    assert all(re.fullmatch(r"\S+(\s+\d+){3} \|(\s+\d+){8}", row) for row in rows), rows
    assert re.search(r"first 100 calls: p50 \d+ us \(x[\d.]+ of warm; target <= 1.3\), p99 \d+ us", out), out
    assert re.search(r": erased /dev/shm/dataclay-job\d+-node1-", out) and "NOT erased" not in out, out
