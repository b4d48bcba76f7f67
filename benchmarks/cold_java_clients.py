"""Cold Java clients started together on a small machine, as a job's workers start on a node: K
JVMs at once on a client host call DataClay.init() and DataClay.getBackends() against a Logic
Module on another namespace host. Counts how many fail although every server is alive (a liveness
bound that mistakes a slow start for a lost server), and times init. Baseline in the same run:
the same starts with the liveness bound off (DATACLAY_UNREACHABLE_MS=0).

    sudo .venv/bin/python benchmarks/cold_java_clients.py --rounds 5 --together 6 [--lib DIR]

--lib is the directory of the client's jars (default: examples/java-wordcount/target/lib, built
by `mvn -f examples/java-wordcount/pom.xml package`); pass one built from an older commit to
compare clients.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

from harness.hosts import HostNetwork, unavailable  # noqa: E402
from harness.multihost import MultiHostCluster  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_LIB = REPO / "examples" / "java-wordcount" / "target" / "lib"

PROGRAM = r"""
import io.dataclay.api.DataClay;

public final class ColdClient {
  public static void main(String[] args) {
    long started = System.nanoTime();
    try {
      DataClay.init();
      long init = System.nanoTime() - started;
      DataClay.getBackends();
      DataClay.finish();
      System.out.println("ok " + init / 1_000_000);
    } catch (RuntimeException e) {
      System.out.println("failed " + (System.nanoTime() - started) / 1_000_000 + " " + e.getMessage());
    }
  }
}
"""


def compile_program(lib: pathlib.Path, into: pathlib.Path) -> str:
    (into / "ColdClient.java").write_text(PROGRAM)
    classpath = f"{into}:{lib}/*"
    subprocess.run(["javac", "-d", str(into), "-cp", classpath, str(into / "ColdClient.java")], check=True)
    return classpath


def one_round(cluster: MultiHostCluster, classpath: str, together: int, unreachable_ms: str) -> list[tuple]:
    """Starts `together` clients at once on node2; returns (outcome, milliseconds, message) each."""
    host = cluster.network["node2"]
    env = dict(cluster.client_env(host), DATACLAY_UNREACHABLE_MS=unreachable_ms)
    clients = [host.popen(["java", "-cp", classpath, "ColdClient"], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) for _ in range(together)]
    results = []
    for client in clients:
        out, err = client.communicate(timeout=300)
        words = (out.strip() or f"failed 0 exit {client.returncode}: {err.strip()[-300:]}").split(" ", 2)
        results.append((words[0], int(words[1]), words[2] if len(words) > 2 else ""))
    return results


def summary(name: str, results: list[tuple]) -> str:
    times = sorted(ms for outcome, ms, _ in results if outcome == "ok")
    failed = [r for r in results if r[0] != "ok"]
    line = f"{name:<28} failed {len(failed)} of {len(results)}"
    if times:
        line += (f"; init (ms) median {statistics.median(times):.0f}  p95 {times[int(0.95 * (len(times) - 1))]}"
                 f"  min {times[0]}  max {times[-1]}")
    for outcome, ms, message in failed[:3]:
        line += f"\n    {outcome} after {ms} ms: {message[:160]}"
    return line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--together", type=int, default=6, help="JVMs started at once in a round")
    parser.add_argument("--lib", type=pathlib.Path, default=DEFAULT_LIB, help="the client's jars")
    args = parser.parse_args()
    if args.rounds < 1 or args.together < 1:
        parser.error("--rounds and --together must be at least 1")
    reason = unavailable()
    if reason:
        print(f"cannot run: {reason}")
        return 2
    if not any(args.lib.glob("javaclay-*.jar")):
        parser.error(f"no javaclay jar in {args.lib}: build it with mvn -f examples/java-wordcount/pom.xml package")
    with tempfile.TemporaryDirectory(prefix="dataclay-cold-") as work:
        classpath = compile_program(args.lib, pathlib.Path(work))
        with HostNetwork(["node0", "node1", "node2"]) as network:
            cluster = MultiHostCluster(network, "node0", ["node1"])
            try:
                cluster.start()
                bounded, unbounded = [], []
                for i in range(args.rounds):
                    load = os.getloadavg()[0]
                    bounded += one_round(cluster, classpath, args.together, "1200")
                    unbounded += one_round(cluster, classpath, args.together, "0")
                    print(f"round {i + 1}: load average {load:.1f} at its start", flush=True)
                print(summary("liveness bound 1200 ms", bounded))
                print(summary("bound off (baseline)", unbounded))
                return 1 if any(r[0] != "ok" for r in bounded) else 0
            finally:
                cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
