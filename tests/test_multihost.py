"""A cluster spread over network-namespace hosts, started with the README's multi-node commands:
the Logic Module on node0, backends on node1 and node2, client programs on node3 (and node0). Every
scenario crosses hosts: aliases, method calls, replicas, versions, moves, garbage collection and
both wordcounts."""
import collections
import fcntl
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from harness.cluster import started_with_models
from harness.hosts import HostNetwork, unavailable
from harness.multihost import FAILOVER_BOUND_S, MultiHostCluster
from harness.wordcount import expected_top_words, printed_top_words

REPO = pathlib.Path(__file__).resolve().parents[1]
WORDCOUNT = REPO / "examples" / "wordcount"
JAVA_WORDCOUNT = REPO / "examples" / "java-wordcount"

BACKENDS_BY_NAME = """
from dataclay import api
api.init()
backends = {b.name: b for b in api.get_backends().values()}
ids = {name: b.id for name, b in backends.items()}
host_of = {b.id: b.host for b in backends.values()}
"""


@pytest.fixture(scope="module")
def spread():
    """node0: Logic Module; node1, node2: backends; node3: clients."""
    reason = unavailable()
    if reason:
        pytest.skip(f"multi-host test: {reason}")
    with HostNetwork(["node0", "node1", "node2", "node3"]) as network:
        cluster = started_with_models(MultiHostCluster(network, "node0", ["node1", "node2"]))
        try:
            yield cluster
        finally:
            cluster.stop()


@pytest.fixture(scope="module")
def java_wordcount(spread) -> str:
    """The Java wordcount example built (enhanced) and its model registered from node0; its classpath.
    Each test that needs it asks for it, so no test relies on another having run first."""
    if shutil.which("mvn") is None:
        pytest.fail("the Java wordcount needs mvn on PATH")
    (JAVA_WORDCOUNT / "target").mkdir(exist_ok=True)
    with open(JAVA_WORDCOUNT / "target" / ".build.lock", "w") as lock:  # another worker may build it meanwhile
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(["mvn", "-q", "-B", "-f", str(JAVA_WORDCOUNT / "pom.xml"), "package"], check=True, timeout=600)
    classes = JAVA_WORDCOUNT / "target" / "classes"
    spread.client("NewModel", "admin", "-", "jwordcount", str(classes), "java")
    return f"{classes}:{JAVA_WORDCOUNT / 'target' / 'lib'}/*"


def run(cluster, host: str, code: str, *args: str, timeout: float = 120) -> dict:
    """Runs a client program on `host`; returns the JSON it printed last."""
    result = cluster.run_python(cluster.network[host], BACKENDS_BY_NAME + code, *args, timeout=timeout)
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_backends_advertise_their_hosts_and_objects_made_on_one_host_are_used_from_another(spread):
    # setup: a graph made from node3, its parts on both backends
    made = run(spread, "node3", """
import json
from people.model import Person
alice, bob = Person("alice", 30), Person("bob", 40)
bob.make_persistent(backend_id=ids["node2"])
alice.friends.append(bob)
alice.make_persistent(alias="mh-alice", backend_id=ids["node1"])
print(json.dumps({"hosts": sorted(host_of.values()), "alice": host_of[alice.get_location()],
                  "bob": host_of[bob.get_location()]}))
""")
    # run: another program on another host
    used = run(spread, "node0", """
import json
from people.model import Person
alice = Person.get_by_alias("mh-alice")
print(json.dumps({"age": alice.birthday(), "friends": alice.friend_names(), "where": host_of[alice.get_location()]}))
""")
    # verify
    assert made == {"hosts": ["node1", "node2"], "alice": "node1", "bob": "node2"}
    assert used == {"age": 31, "friends": ["bob"], "where": "node1"}


def test_replicas_versions_and_moves_cross_hosts(spread):
    # setup
    code = """
import json
from people.model import Person
p = Person("carol", 20)
p.make_persistent(alias="mh-carol", backend_id=ids["node1"])
p.new_replica(ids["node2"])
replicated = [host_of[b] for b in p.get_all_locations()]
p.birthday()
v = p.new_version(ids["node2"])
version_at = host_of[v.get_location()]
v.birthday()
v.consolidate_version()
p.move(ids["node2"])
print(json.dumps({"replicated": replicated, "version_at": version_at, "age": p.age,
                  "moved_to": host_of[p.get_all_locations()[0]]}))
"""
    # run
    done = run(spread, "node3", code)
    seen = run(spread, "node0", """
import json
from people.model import Person
p = Person.get_by_alias("mh-carol")
print(json.dumps({"age": p.age, "master": host_of[p.get_all_locations()[0]]}))
""")
    # verify
    assert done == {"replicated": ["node1", "node2"], "version_at": "node2", "age": 22, "moved_to": "node2"}
    assert seen == {"age": 22, "master": "node2"}


def test_garbage_collection_removes_unreachable_objects_from_every_host(spread):
    # setup: an aliased object on node1 holding one on node2, and garbage on both
    made = run(spread, "node3", """
import json
from people.model import Person
kept, friend = Person("kept", 1), Person("friend", 2)
friend.make_persistent(backend_id=ids["node2"])
kept.friends.append(friend)
kept.make_persistent(alias="mh-kept", backend_id=ids["node1"])
garbage = [Person(f"g{i}", i) for i in range(4)]
for i, g in enumerate(garbage):
    g.make_persistent(backend_id=ids["node1" if i % 2 else "node2"])
print(json.dumps({"friend": str(friend.get_id()), "garbage": [str(g.get_id()) for g in garbage]}))
""")
    # run: the session that made them has ended
    collected = spread.client("CollectGarbage", "admin", "-").stdout
    after = run(spread, "node3", """
import json, sys
from dataclay.exceptions import ObjectDoesNotExistError
from people.model import Person
made = json.loads(sys.argv[1])
gone = []
for object_id in made["garbage"]:
    try:
        api.get_by_id(object_id)
    except ObjectDoesNotExistError:
        gone.append(object_id)
kept = Person.get_by_alias("mh-kept")
print(json.dumps({"gone": gone, "friends": kept.friend_names(), "friend": api.get_by_id(made["friend"]).name}))
""", json.dumps(made))
    # verify
    assert "collected" in collected
    assert after == {"gone": made["garbage"], "friends": ["friend"], "friend": "friend"}


def test_the_python_wordcount_runs_with_its_texts_on_two_hosts(spread, tmp_path):
    # setup: the model registered from node0, stubs and texts made on node3
    spread.client("NewModel", "admin", "-", "wordcount", str(WORDCOUNT / "model"), "python")
    node3 = spread.network["node3"]
    spread.client("GetStubs", "admin", "-", "wordcount", str(tmp_path / "stubs"), host=node3)
    env = dict(spread.client_env(node3), PYTHONPATH=str(tmp_path / "stubs"))
    node3.run([sys.executable, str(WORDCOUNT / "prepare.py"), "--texts", "6", "--size", "64K"], env=env, timeout=300)
    # run: two worker processes, as COMPSs would run the tasks
    counted = node3.run([sys.executable, str(WORDCOUNT / "wordcount.py"), "Words", "--workers", "2"], env=env,
                        timeout=300)
    # verify: the count agrees with a local one, and the texts live on both backends
    assert printed_top_words(counted.stdout) == expected_top_words(6, 64 * 1024, 1)
    where = run(spread, "node3", """
import json
from WordCount.classes import TextCollection
texts = TextCollection.get_by_alias("Words")
print(json.dumps(sorted({host_of[t.get_location()] for t in texts.texts})))
""".replace("from WordCount", "import sys; sys.path.insert(0, sys.argv[1])\nfrom WordCount"), str(tmp_path / "stubs"))
    assert where == ["node1", "node2"]


def test_the_java_wordcount_runs_against_backends_on_two_hosts(spread, java_wordcount):
    # setup: the example built (enhanced), its model registered from node0
    node3 = spread.network["node3"]
    classpath = java_wordcount
    env = spread.client_env(node3)
    # run
    node3.run(["java", "-cp", classpath, "wordcount.WordCount", "prepare", "MHWords", "4", "65536"], env=env)
    counted = node3.run(["java", "-cp", classpath, "wordcount.WordCount", "count", "MHWords"], env=env)
    # verify: the top words of the texts the example generates (java.util.Random, seed 1)
    assert "Ready to count words from 4 different texts" in counted.stdout
    expected = collections.Counter()
    random = JavaRandom(1)
    for _ in range(4):
        expected.update(java_text(random, 65536).split())
    top = sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    assert f"Top 10: [{', '.join(f'{w}={n}' for w, n in top)}]" in counted.stdout


class JavaRandom:
    """java.util.Random (its 48-bit linear congruential generator), for the texts the Java example makes."""

    MASK = (1 << 48) - 1

    def __init__(self, seed: int):
        self.seed = (seed ^ 0x5DEECE66D) & self.MASK

    def _next(self, bits: int) -> int:
        self.seed = (self.seed * 0x5DEECE66D + 0xB) & self.MASK
        return self.seed >> (48 - bits)

    def next_double(self) -> float:
        return ((self._next(26) << 27) + self._next(27)) / float(1 << 53)


def java_text(random: JavaRandom, size: int) -> str:
    """WordCount.generate: Zipf-like words "w<rank>" until the text has `size` characters."""
    words, length = [], 0
    while length < size:
        word = f"w{int(20000 ** random.next_double())} "
        words.append(word)
        length += len(word)
    return "".join(words)


JAVA_READER = r"""
import io.dataclay.api.DataClay;
import io.dataclay.api.BackendInfo;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import wordcount.model.TextCollection;

public final class FailoverReader {
  public static void main(String[] args) throws Exception {
    DataClay.init();
    Map<UUID, BackendInfo> backends = DataClay.getBackends();
    TextCollection texts = TextCollection.getByAlias(args[0]);
    UUID master = texts.getAllLocations().get(0);
    for (UUID b : backends.keySet()) {
      if (!b.equals(master)) {
        texts.newReplica(b, false);
      }
    }
    int warm = texts.getTexts().size();
    System.out.println(backends.get(master).host() + " " + warm);
    System.out.flush();
    System.in.read();  // the master's host is cut off now
    long started = System.nanoTime();
    int after = texts.getTexts().size();
    System.out.println("{\"read\": " + (System.nanoTime() - started) / 1e9 + ", \"texts\": " + after + "}");
    DataClay.finish();
  }
}
"""


def test_a_java_read_fails_over_to_a_replica_on_another_host_within_the_silence_bound(spread, java_wordcount, tmp_path):
    # setup: a Java wordcount collection of its own, replicated to the other backend
    (tmp_path / "FailoverReader.java").write_text(JAVA_READER)
    classpath = java_wordcount
    subprocess.run(["javac", "-d", str(tmp_path), "-cp", classpath, str(tmp_path / "FailoverReader.java")],
                   check=True, timeout=120)
    node3 = spread.network["node3"]
    env = spread.client_env(node3)
    node3.run(["java", "-cp", classpath, "wordcount.WordCount", "prepare", "MHFailover", "4", "65536"], env=env)
    reader = node3.popen(["java", "-cp", f"{tmp_path}:{classpath}", "FailoverReader", "MHFailover"],
                         env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = reader.stdout.readline().split()
    if len(first) != 2:
        reader.kill()
        out, err = reader.communicate()
        pytest.fail(f"the reader did not get ready (exit {reader.returncode}):\n{out[-2000:]}\n{err[-4000:]}\n"
                    f"{spread.log_tail()}")
    master, warm = first
    # run: the collection's master host is cut off
    spread.network[master].link_down()
    try:
        out, err = reader.communicate("\n", timeout=120)
    finally:
        spread.network[master].link_up()
    # verify
    assert reader.returncode == 0, err[-3000:]
    read = json.loads(out.strip().splitlines()[-1])
    assert read["texts"] == int(warm) == 4
    assert read["read"] < FAILOVER_BOUND_S, read
