"""`dataclay slurm`'s checks of its options and its job files, without a Slurm (the jobs themselves
run against a real one in tests/test_slurm_launcher.py)."""
import os
import pathlib
import stat

import pytest

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.cli.slurm import slurm
from dataclay._internal.cli.common.settings import ClusterSettings
from dataclay._internal.cli.slurm.slurm_job import JobDir, SlurmSettings, allocation, node_dir

NODES = ["node1", "node2", "node3"]


def plan(tmp_path, *options: str):
    args = slurm._parser().parse_args(["start", *options])
    settings = SlurmSettings.from_env({"DATACLAY_SLURM_DIR": str(tmp_path / "jobs")})
    return slurm._plan(args, "42", NODES, settings, ClusterSettings.from_env({"DATACLAY_HOME": str(tmp_path)}))


def test_the_default_plan_puts_the_logic_module_on_the_first_node_and_a_backend_on_every_node(tmp_path):
    made = plan(tmp_path)
    assert (made.lm_node, made.backend_nodes, made.store, made.store_size) == ("node1", NODES, "kv", "1G")
    assert (made.pool_dir, made.port, made.host("node2")) == ("/dev/shm", 0, "node2")


def test_options_choose_nodes_engine_size_suffix_and_models(tmp_path):
    made = plan(tmp_path, "--lm-node", "node2", "--backend-nodes", " node3  node1 ", "--store", "heap",
                "--pool-size", "4G", "--host-suffix=-ib0", "--model", f"people:python:{tmp_path}")
    assert (made.lm_node, made.backend_nodes, made.store, made.store_size) == ("node2", ["node3", "node1"], "heap", "4G")
    assert made.host("node3") == "node3-ib0"


@pytest.mark.parametrize("options, message", [
    (["--store", "tape"], "unknown store engine 'tape'"),
    (["--pool-size", "lots"], "DATACLAY_STORE_SIZE must be a size"),
    (["--backend-nodes", "node1 node9"], "node9 not in this job's nodes (node1, node2, node3)"),
    (["--lm-node", "node7"], "node7 not in this job's nodes"),
    (["--backend-nodes", "node1 node1"], "names a node twice"),
    (["--backend-nodes", " "], "--backend-nodes names no node"),
    (["--host-suffix=-ib0;rm"], "--host-suffix may hold letters, digits"),
    (["--port", "70000"], "--port must be a port number"),
    (["--timeout", "0"], "--timeout must be positive"),
    (["--model", "people:cobol:/tmp"], "--model must be NAMESPACE:python|java:PATH"),
    (["--model", "people:python:/nowhere/at/all"], "/nowhere/at/all does not exist"),
    (["--store", "postgres"], "the postgres engine needs DATACLAY_STORE_URL"),
])
def test_a_bad_option_is_refused_saying_what_is_wrong(tmp_path, options, message):
    with pytest.raises(InvalidArgumentError) as refused:
        plan(tmp_path, *options)
    assert message in str(refused.value)


def test_client_files_are_private_and_name_the_logic_modules_advertised_host(tmp_path):
    # setup
    made = plan(tmp_path, "--host-suffix=-ib0", "--client-file", str(tmp_path / "compss" / "storage.properties"))
    job = JobDir(tmp_path / "jobs" / "42")
    job.create()
    password = job.make_credentials()
    # run
    files = job.write_client_files(made, 4242)
    # verify
    assert files == [job.client_file, tmp_path / "compss" / "storage.properties"]
    for path in files + [job.secret_file, job.password_file]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = files[1].read_text()
    assert "DATACLAY_HOST=node1-ib0\nDATACLAY_PORT=4242\nDATACLAY_USER=admin\n" in text
    assert f"DATACLAY_PASSWORD={password}\n" in text
    assert stat.S_IMODE(job.path.stat().st_mode) == 0o700


def test_erasing_the_credentials_removes_every_secret_and_client_file(tmp_path):
    made = plan(tmp_path, "--client-file", str(tmp_path / "extra.properties"))
    job = JobDir(tmp_path / "jobs" / "42")
    job.create()
    job.make_credentials()
    job.write_client_files(made, 1)
    erased = job.erase_credentials(made)
    assert sorted(map(pathlib.Path, erased)) == sorted([job.secret_file, job.password_file, job.client_file,
                                                        tmp_path / "extra.properties"])
    assert not any(p.exists() for p in map(pathlib.Path, erased))


def test_a_second_start_in_a_job_whose_cluster_was_not_stopped_is_refused(tmp_path):
    job = JobDir(tmp_path / "jobs" / "42")
    job.create()
    job.save(plan(tmp_path))
    with pytest.raises(InvalidArgumentError, match="already started for this job"):
        job.create()


def test_outside_an_allocation_it_says_so():
    with pytest.raises(InvalidArgumentError, match="runs inside a Slurm allocation"):
        allocation({})
    with pytest.raises(InvalidArgumentError, match="SLURM_JOB_ID must be a job number"):
        allocation({"SLURM_JOB_ID": "x1", "SLURM_JOB_NODELIST": "node1"})


def test_a_nodes_local_directory_is_named_for_the_epilog_script():
    assert node_dir("/dev/shm", "42", "node3", "9f0e") == pathlib.Path("/dev/shm/dataclay-job42-node3-9f0e")
    epilog = (pathlib.Path(__file__).resolve().parents[2] / "scripts" / "slurm-epilog.sh").read_text()
    assert '"$base"/dataclay-job"$job"-*' in epilog


def test_each_start_draws_a_new_random_tag_for_the_node_local_directories(tmp_path):
    first, second = plan(tmp_path), plan(tmp_path)
    assert len(first.node_tag) == 16 and int(first.node_tag, 16) >= 0
    assert first.node_tag != second.node_tag


def test_a_job_directory_others_may_read_is_refused_and_left_as_it_was(tmp_path):
    # setup: a job directory made by hand, 0755
    path = tmp_path / "jobs" / "42"
    path.mkdir(parents=True)
    path.chmod(0o755)
    # run
    with pytest.raises(InvalidArgumentError) as refused:
        JobDir(path).create()
    # verify
    assert f"the job directory {path} has mode 0755" in str(refused.value)
    assert f"`chmod 700 {path}`" in str(refused.value)
    assert list(path.iterdir()) == [] and stat.S_IMODE(path.stat().st_mode) == 0o755


@pytest.mark.skipif(os.geteuid() != 0, reason="simulating another user needs root (os.chown)")
def test_a_job_directory_another_user_owns_is_refused_and_its_plan_never_read(tmp_path):
    # setup: another user's job directory, with a plan of theirs in it
    job = JobDir(tmp_path / "jobs" / "42")
    job.create()
    job.save(plan(tmp_path))
    for path in (job.path, job.plan_file):
        os.chown(path, 54321, 54321)
    # run
    with pytest.raises(InvalidArgumentError) as refused:
        job.load()
    # verify
    assert f"the job directory {job.path} is owned by uid 54321" in str(refused.value)


def test_a_jobs_metrics_ports_never_collide_on_the_logic_modules_node():
    from dataclay._internal.cli.slurm.slurm_node import metrics_env
    # the Logic Module's node runs a backend too: the backends take the next port, on every node
    assert metrics_env(9464, "logicmodule") == {"DATACLAY_METRICS_PORT": "9464"}
    assert metrics_env(9464, "backend") == {"DATACLAY_METRICS_PORT": "9465"}
    assert metrics_env(0, "backend") == {"DATACLAY_METRICS_PORT": "0"}
    assert metrics_env(None, "backend") == {} and metrics_env(None, "logicmodule") == {}
