"""COMPSs' storage contract on a real Slurm: scripts/storage_init.sh and storage_stop.sh called exactly
as the job script `enqueue_compss --storage_home=<repo> --storage_props=FILE` generates calls them, in
a job on four namespace hosts (master node1, workers node2-node4). The storage configuration they
write is what COMPSs passes as --storage_conf: Python's storage.api.init and Java's StorageItf.init
open it, and getLocations answers the real host names of the backends holding an object, master
first. The scripts' exit codes are checked for a good and a failing start."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from harness.cluster import MODELS, REPO
from harness.hosts import unavailable as hosts_unavailable
from harness.slurm import job_pools, server_processes, slurm_on_hosts, unavailable as slurm_unavailable

BIN = pathlib.Path(sys.executable).parent
EXAMPLE = REPO / "examples" / "java-wordcount"

# The application's master, as COMPSs starts it with --storage_conf: storage.api.init(conf).
PYTHON_MASTER = textwrap.dedent("""
    import json, sys
    from storage import api
    api.init(sys.argv[1])
    from dataclay import api as dataclay_api
    from people.model import Person
    hosts = {info.host: backend_id for backend_id, info in dataclay_api.get_backends().items()}
    shared = Person("shared", 40)
    shared.make_persistent(backend_id=hosts["node3"])
    shared.new_replica(backend_id=hosts["node2"])
    solo = Person("solo", 1)
    solo.make_persistent(backend_id=hosts["node4"])
    engines = sorted({info.store_engine for info in dataclay_api.get_backends().values()})
    out = {"backends": sorted(hosts), "engines": engines, "locations": api.getLocations(shared.getID()),
           "solo": api.getLocations(solo.getID()), "birthday": api.getByID(shared.getID()).birthday()}
    api.finish()
    print("PY " + json.dumps(out))
""")

# COMPSs' Java runtime: StorageItf.init(conf), then getLocations of a replicated object.
JAVA_MASTER = textwrap.dedent("""
    import io.dataclay.api.BackendInfo;
    import io.dataclay.api.DataClay;
    import java.util.Map;
    import java.util.TreeMap;
    import java.util.UUID;
    import storage.StorageItf;
    import wordcount.model.TextStats;

    public final class CompssMaster {
      public static void main(String[] args) throws Exception {
        StorageItf.init(args[0]);
        try {
          Map<String, UUID> byHost = new TreeMap<>();
          for (BackendInfo b : DataClay.getBackends().values()) {
            byHost.put(b.host(), b.id());
          }
          TextStats stats = new TextStats();
          stats.makePersistent(byHost.get("node4"));
          StorageItf.newReplica(stats.getID(), "node3");
          System.out.println("JAVA {\\"backends\\": \\"" + String.join(" ", byHost.keySet())
              + "\\", \\"locations\\": \\"" + String.join(" ", StorageItf.getLocations(stats.getID())) + "\\"}");
        } finally {
          StorageItf.finish();
        }
      }
    }
""")

# What enqueue_compss writes into the job script (host list, master, storage_init, the application
# with --storage_conf, storage_stop), with the application replaced by the two masters above.
JOB = textwrap.dedent("""
    host_list=$(scontrol show hostname $SLURM_JOB_NODELIST | paste -d" " -s)
    master_node=$(hostname)
    worker_nodes=$(echo ${{host_list}} | sed -e "s/${{master_node}}//g")
    storage_conf=$HOME/.COMPSs/$SLURM_JOB_ID/storage/cfgfiles/storage.properties
    storage_master_node="${{master_node}}"
    {home}/scripts/storage_init.sh $SLURM_JOB_ID "${{master_node}}" "${{storage_master_node}}" "node9" ethernet {props}
    echo "BAD-INIT $?"
    variables_to_be_sourced=$(mktemp)
    {home}/scripts/storage_init.sh $SLURM_JOB_ID "${{master_node}}" "${{storage_master_node}}" "${{worker_nodes}}" ethernet {props} "${{variables_to_be_sourced}}"
    echo "INIT $?"
    if [ -f "${{variables_to_be_sourced}}" ]; then
        source "${{variables_to_be_sourced}}"
        rm "${{variables_to_be_sourced}}"
    fi
    echo "CONF-MODE $(stat -c %a $storage_conf)"
    echo "HOME-SET $(ls $DATACLAY_HOME/client.properties | wc -l)"
    python {shared}/compss_master.py ${{storage_conf}}
    java -cp {classpath} CompssMaster ${{storage_conf}}
    {home}/scripts/storage_stop.sh $SLURM_JOB_ID "${{master_node}}" "${{storage_master_node}}" "${{worker_nodes}}" ethernet {props}
    echo "STOP $?"
    echo "CONF-LEFT $(ls $storage_conf 2>/dev/null | wc -l)"
    echo "LEFT $(ls -d /dev/shm/dataclay-job$SLURM_JOB_ID-* 2>/dev/null | wc -l)"
""")


@pytest.fixture(scope="module")
def java_master(tmp_path_factory):
    """The Java wordcount model built in a copy of its project (other tests build the original at the same
    time) and CompssMaster compiled against it; returns (model classes, class path)."""
    if shutil.which("mvn") is None or shutil.which("javac") is None:
        pytest.fail("the COMPSs Java test needs mvn and javac on PATH")
    project = tmp_path_factory.mktemp("java-wordcount")
    shutil.copy(EXAMPLE / "pom.xml", project)
    shutil.copytree(EXAMPLE / "src", project / "src")
    config = REPO / ".mvn" / "maven.config"  # a developer's private local repository, if any
    options = config.read_text().split() if config.exists() else []
    subprocess.run(["mvn", "-q", "-B", *options, "-f", str(project / "pom.xml"), "package"], check=True, timeout=600)
    classes = project / "target" / "classes"
    (project / "CompssMaster.java").write_text(JAVA_MASTER)
    classpath = f"{classes}:{project / 'target' / 'lib'}/*"
    subprocess.run(["javac", "-d", str(project), "-cp", classpath, str(project / "CompssMaster.java")], check=True,
                   timeout=120)
    return classes, f"{project}:{classpath}"


@pytest.fixture(scope="module")
def slurm():
    """A Slurm on namespace hosts node1..node4."""
    reason = hosts_unavailable() or slurm_unavailable()
    if reason:
        pytest.skip(f"Slurm test: {reason}")
    with slurm_on_hosts(["node1", "node2", "node3", "node4"]) as cluster:
        yield cluster


def test_compss_storage_scripts_start_a_cluster_whose_configuration_python_and_java_read(slurm, java_master):
    # setup
    classes, classpath = java_master
    shared = slurm.shared
    shared.mkdir(exist_ok=True)
    (shared / "compss_master.py").write_text(PYTHON_MASTER)
    props = shared / "storage.props"
    props.write_text(f"# dataClay for COMPSs\nDATACLAY_STORE=heap\nDATACLAY_STORE_SIZE=64M\n"
                     f"DATACLAY_MODEL=tests:python:{MODELS}\nDATACLAY_MODEL=jwordcount:java:{classes}\n")
    home = shared / "home"
    home.mkdir()
    env = slurm.env({"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(MODELS),
                     "HOME": str(home)})
    body = JOB.format(home=REPO, props=props, shared=shared, classpath=classpath)
    # run
    job_id, output = slurm.submit(body, "--nodes=4", env=env)
    info = slurm.wait(job_id, timeout=300)
    # verify
    text = output.read_text()
    assert info.state == "COMPLETED", text
    marks = dict(re.findall(r"^([A-Z-]+) (.*)$", text, re.M))
    assert marks["BAD-INIT"] == "3" and "node9 not in this job's nodes" in text
    assert (marks["INIT"], marks["CONF-MODE"], marks["STOP"]) == ("0", "600", "0"), text
    assert "registering model tests (python)" in text and "registering model jwordcount (java)" in text, text
    assert marks["HOME-SET"] == "1", text  # the variables file COMPSs sources gave DATACLAY_HOME
    python = json.loads(marks["PY"])
    assert python == {"backends": ["node2", "node3", "node4"], "engines": ["heap"], "locations": ["node3", "node2"],
                      "solo": ["node4"], "birthday": 41}
    assert json.loads(marks["JAVA"]) == {"backends": "node2 node3 node4", "locations": "node4 node3"}
    assert (marks["CONF-LEFT"], marks["LEFT"]) == ("0", "0"), text
    assert job_pools(job_id) == [] and server_processes(slurm.network) == []


def test_compss_storage_scripts_answer_usage_and_refuse_bad_arguments_with_their_exit_codes(tmp_path):
    # setup
    props = tmp_path / "storage.props"
    props.write_text("DATACLAY_STOR=kv\n")
    env = {**os.environ, "SLURM_JOB_ID": "12"}
    init, stop = str(REPO / "scripts" / "storage_init.sh"), str(REPO / "scripts" / "storage_stop.sh")

    def run(*argv: str) -> tuple[int, str]:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout + done.stderr

    # run
    usage = run(init, "usage")
    too_few = run(init, "12", "node1")
    other_job = run(init, "13", "node1", "node1", "node2", "ethernet", str(props))
    network = run(init, "12", "node1", "node1", "node2", "myrinet", str(props))
    no_props = run(init, "12", "node1", "node1", "node2", "ethernet", str(tmp_path / "missing"))
    bad_key = run(init, "12", "node1", "node1", "node2", "ethernet", str(props))
    stop_usage = run(stop, "usage")
    stop_too_few = run(stop, "12")
    # verify
    assert usage[0] == 0 and "Usage:" in usage[1]
    assert too_few[0] == 1 and "expected 6 or 7 arguments" in too_few[1]
    assert other_job[0] == 1 and "not run inside Slurm job 13" in other_job[1]
    assert network[0] == 1 and "network must be ethernet, infiniband or data" in network[1]
    assert no_props[0] == 2 and "does not exist" in no_props[1]
    assert bad_key[0] == 2 and "unknown key 'DATACLAY_STOR'" in bad_key[1]
    assert stop_usage[0] == 0 and stop_too_few[0] == 1
