#!/usr/bin/env python
"""What confining model code costs, and what it buys (issue 21), on one-backend `kv` clusters started
in this run: the default (every account's Python and Java methods in a confined process of its own,
one spare process started ahead), the same without the spare, against the unconfined modes a single-tenant cluster may choose (DATACLAY_EE_CONFINEMENT=none,
DATACLAY_JAVA_EE=in-process).

Per mode:
  - a Python method call (Counter.get) and, as the baseline, a bare Logic Module round trip (Health),
    p50/p99 after warm-up, from one client;
  - a Java method call (the Java wordcount's TextStats.topWords), p50/p99 of the last of
    benchmarks/java's rounds;
  - an environment's start-up: the first method call of a new account (it takes the spare process,
    or without one its process starts for it) against the same account's next call, over several
    accounts;
  - a killed environment: the time from SIGKILL of an account's process to its next call answered;
  - one account's flood of slow calls (16 at once, 2 s each, without pause) against another
    account's quick calls: their p99 against the same account's p99 on the idle backend.

Usage: benchmarks/confinement.py [--calls N] [--accounts N] [--skip-java]"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

from _cluster import REPO, Cluster, p50_p99

HOSTILE = REPO / "tests" / "hostile_models"
EXAMPLE = REPO / "examples" / "java-wordcount"
MODES = {
    "confined (default)": {},
    "confined, no spare process (DATACLAY_EE_SPARES=0)": {"DATACLAY_EE_SPARES": "0"},
    "unconfined (none + Java in-process)": {"DATACLAY_EE_CONFINEMENT": "none", "DATACLAY_JAVA_EE": "in-process"},
}

LATENCY = textwrap.dedent("""
    import json, sys, time
    from dataclay import api
    from dataclay._internal.rpc import LogicModuleClient
    api.init()
    from people.model import Counter
    calls = int(sys.argv[1])
    c = Counter(1); c.make_persistent()
    lm = LogicModuleClient(api.get_runtime().router.lm_target().address)
    for _ in range(calls // 2):
        c.get(); lm.health()
    method, base = [], []
    for _ in range(calls):
        t0 = time.perf_counter(); c.get(); t1 = time.perf_counter(); lm.health(); t2 = time.perf_counter()
        method.append(t1 - t0); base.append(t2 - t1)
    print(json.dumps({"method": method, "base": base}))
""")

FIRST_CALL = textwrap.dedent("""
    import json, time
    from dataclay import api
    api.init()
    from people.model import Counter
    c = Counter(1); c.make_persistent()
    t0 = time.perf_counter(); c.get(); t1 = time.perf_counter(); c.get(); t2 = time.perf_counter()
    print(json.dumps({"first": t1 - t0, "next": t2 - t1, "id": c.getID()}))
""")

UNTIL_ANSWERED = textwrap.dedent("""
    import json, sys, time
    from dataclay import api
    api.init()
    from people.model import Counter
    c = Counter.get_by_id(sys.argv[1])
    c.get()
    print("ready", flush=True)
    sys.stdin.readline()
    killed = time.perf_counter()
    while True:
        try:
            c.get()
            break
        except Exception:
            time.sleep(0.005)
    print(json.dumps(time.perf_counter() - killed))
""")

QUICK = textwrap.dedent("""
    import json, sys, time
    from dataclay import api
    api.init()
    from hostile.probes import Probe
    p = Probe(); p.make_persistent()
    for _ in range(50):
        p.sleep(0)
    samples = []
    for _ in range(int(sys.argv[1])):
        t0 = time.perf_counter(); p.sleep(0); samples.append(time.perf_counter() - t0)
    print(json.dumps(samples))
""")

FLOOD = textwrap.dedent("""
    import concurrent.futures, sys, time
    from dataclay import api
    api.init()
    from hostile.probes import Probe
    p = Probe(); p.make_persistent()
    p.sleep(0)
    print("flooding", flush=True)
    end = time.monotonic() + float(sys.argv[1])
    def loop(_):
        while time.monotonic() < end:
            p.sleep(2)
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(loop, range(16)))
""")


def client(cluster: Cluster, user: str, code: str, *args: str, stdin=None) -> subprocess.Popen:
    password = f"{user}-password-1"
    env = dict(cluster.env, DATACLAY_USER=user, DATACLAY_PASSWORD=password)
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env, stdout=subprocess.PIPE, stdin=stdin,
                            stderr=subprocess.PIPE, text=True)


def output(process: subprocess.Popen):
    out, err = process.communicate(timeout=600)
    if process.returncode != 0:
        raise RuntimeError(f"a client failed:\n{out}\n{err}")
    return json.loads(out.strip().splitlines()[-1])


def accounts(cluster: Cluster, names) -> None:
    for name in names:
        cluster.dataclaycmd("NewAccount", name, f"{name}-password-1")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


def environment_pid(cluster: Cluster, account: str) -> int:
    from dataclay._internal.rpc import DataServiceClient, LogicModuleClient
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    lm.token = lm.new_session(cluster.admin_user(), cluster.admin_password(), "").token
    backend = lm.get_backends()[0]
    ds = DataServiceClient(f"{backend.host}:{backend.port}", lm.token)
    try:
        for env in ds.get_status().environments:
            for p in env.processes:
                if p.account == account and p.alive:
                    return p.pid
    finally:
        ds.close()
        lm.close()
    raise LookupError(f"no live environment of {account}")


def run_mode(name: str, settings: dict, calls: int, how_many: int, java: bool) -> None:
    cluster = Cluster(backends=1, extra_env={**settings, "DATACLAY_EE_THREADS": "16",
                                             "PYTHONPATH": f"{HOSTILE}{os.pathsep}{REPO / 'tests' / 'models'}"})
    try:
        cluster.start()
        cluster.register_models()
        cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "hostile", str(HOSTILE), "python")
        print(f"== {name}")
        load = os.getloadavg()[0]
        accounts(cluster, ["lat"])
        latency = output(client(cluster, "lat", LATENCY, str(calls)))
        m50, m99 = p50_p99(latency["method"])
        b50, b99 = p50_p99(latency["base"])
        print(f"  python method call     p50 {ms(m50)}  p99 {ms(m99)}  (n={calls}, load {load:.1f})")
        print(f"  baseline LM round trip p50 {ms(b50)}  p99 {ms(b99)}   ratio p50 {m50 / b50:.2f}")
        if java:
            java_latency(cluster, calls)
        names = [f"new{i}" for i in range(how_many)]
        accounts(cluster, names)
        starts = [output(client(cluster, n, FIRST_CALL)) for n in names]
        f50, f99 = p50_p99([s["first"] for s in starts])
        n50, _ = p50_p99([s["next"] for s in starts])
        print(f"  first call of a new account p50 {ms(f50)}  max {ms(f99)}"
              f"  (next call p50 {ms(n50)}, n={how_many})")
        killed = []
        for n, s in zip(names[:5], starts[:5]):
            waiter = client(cluster, n, UNTIL_ANSWERED, s["id"], stdin=subprocess.PIPE)
            assert waiter.stdout.readline().strip() == "ready"
            os.kill(environment_pid(cluster, n), signal.SIGKILL)
            waiter.stdin.write("go\n")
            waiter.stdin.flush()
            killed.append(output(waiter))
        k50, kmax = p50_p99(killed)
        print(f"  killed environment serving again p50 {ms(k50)}  max {ms(kmax)}  (n={len(killed)})")
        accounts(cluster, ["quick", "flood"])
        idle = output(client(cluster, "quick", QUICK, str(calls // 4)))
        i50, i99 = p50_p99(idle)
        flood = client(cluster, "flood", FLOOD, "30")
        assert flood.stdout.readline().strip() == "flooding"
        time.sleep(2)
        busy = output(client(cluster, "quick", QUICK, str(calls // 4)))
        flood.wait(120)
        u50, u99 = p50_p99(busy)
        print(f"  another account's quick call, idle backend        p50 {ms(i50)}  p99 {ms(i99)}")
        print(f"  the same while one account floods 16 slow calls   p50 {ms(u50)}  p99 {ms(u99)}"
              f"   ratio p99 {u99 / i99:.2f}")
    finally:
        cluster.stop()


def java_latency(cluster: Cluster, calls: int) -> None:
    classpath = f"{EXAMPLE / 'target' / 'classes'}:{EXAMPLE / 'target' / 'lib'}/*"
    cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "jwordcount", str(EXAMPLE / "target" / "classes"),
                        "java")
    out = cluster.home / "bench-classes"
    out.mkdir(exist_ok=True)
    subprocess.run(["javac", "-d", str(out), "-cp", classpath, str(REPO / "benchmarks" / "java" / "JavaLatency.java")],
                   check=True, timeout=300)
    result = subprocess.run(["java", "-cp", f"{out}:{classpath}", "JavaLatency", str(calls), "200", "3"],
                            env=cluster.env, capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        raise RuntimeError(result.stdout + result.stderr)
    last = [line for line in result.stdout.splitlines() if "method call" in line][-1]
    print("  java method call       " + last.split(")", 1)[1].strip() + "  (last of 3 rounds)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--accounts", type=int, default=8)
    parser.add_argument("--skip-java", action="store_true")
    options = parser.parse_args()
    if not options.skip_java:
        subprocess.run(["mvn", "-q", "-B", "-o", "-f", str(EXAMPLE / "pom.xml"), "package"], check=True, timeout=900)
    for name, settings in MODES.items():
        run_mode(name, settings, options.calls, options.accounts, not options.skip_java)


if __name__ == "__main__":
    main()
