"""`dataclay slurm run | start | stop`: a dataClay cluster on the nodes of a Slurm job.

`run [options] -- PROGRAM ARGS` starts the cluster (the Logic Module on the first node, a backend
on every node), runs PROGRAM with DATACLAY_HOME set to the job directory (so `api.init()` and
`dataclaycmd` find its client.properties), stops the cluster and exits with PROGRAM's code. It
stops everything when PROGRAM fails, on SIGTERM/SIGINT/SIGHUP (scancel; the time limit) and on
SIGUSR1, the warning `#SBATCH --signal=B:USR1@SECONDS` sends before the time limit (then it also
exports, when asked). `start` and `stop` are the two halves, for scripts such as COMPSs'
storage_init.sh and storage_stop.sh."""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import secrets
import signal
import subprocess
import sys
import time

from dataclay.exceptions import DataClayException, InvalidArgumentError
from dataclay._internal.cli.snapshot import import_review, snapshot_signing as signing
from dataclay._internal.cli.slurm import slurm_node
from dataclay._internal.cli.common.settings import ClusterSettings, check_size
from dataclay._internal.cli.local import warm_up
from dataclay._internal import engines
from dataclay._internal.cli.slurm.slurm_cluster import JobCluster
from dataclay._internal.cli.slurm.slurm_job import JobDir, JobPlan, SlurmSettings, allocation

START_TIMEOUT = 180.0
CONNECTION_KEYS = ("DATACLAY_HOST", "DATACLAY_PORT", "DATACLAY_USER", "DATACLAY_PASSWORD", "DATACLAY_TLS_CA")
_SUFFIX = re.compile(r"^[A-Za-z0-9.-]*$")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dataclay slurm", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="{run,start,stop}")
    run = commands.add_parser("run", help="start the cluster, run PROGRAM, stop the cluster; exit with its code")
    start = commands.add_parser("start", help="start the cluster on the job's nodes and return once it is up")
    stop = commands.add_parser("stop", help="stop the job's cluster and erase its pools and credentials")
    for command in (run, start):
        command.add_argument("--store", default=None, help="store engine (default: $DATACLAY_STORE or kv)")
        command.add_argument("--pool-size", default=None, metavar="SIZE",
                             help="pool size per backend, e.g. 4G (default: $DATACLAY_STORE_SIZE or 1G)")
        command.add_argument("--pool-dir", default=None, metavar="DIR",
                             help="node-local directory for the pools (default: $DATACLAY_SLURM_POOLS or /dev/shm)")
        command.add_argument("--lm-node", default=None, metavar="NODE",
                             help="node of the Logic Module (default: the job's first node)")
        command.add_argument("--backend-nodes", default=None, metavar="'NODE ...'",
                             help="nodes that get a backend, space-separated (default: every node of the job)")
        command.add_argument("--host-suffix", default="", metavar="SUFFIX",
                             help="added to node names to make the advertised host names (e.g. --host-suffix=-ib0)")
        command.add_argument("--port", type=int, default=0, help="the Logic Module's port (default: a free one)")
        command.add_argument("--client-file", action="append", default=[], metavar="PATH",
                             help="also write the client configuration (mode 0600) here; repeatable")
        command.add_argument("--model", action="append", default=[], metavar="NAMESPACE:LANGUAGE:PATH",
                             help="register this model once the cluster is up (dataclaycmd NewModel; "
                                  "LANGUAGE python or java); repeatable")
        command.add_argument("--import", dest="import_dir", default=None, metavar="DIR",
                             help="load this snapshot (`dataclay import DIR`) once the cluster is up")
        command.add_argument("--import-allow", action="append", default=[], metavar="NAME,...",
                             help="what the import may do besides adding new datasets (`dataclay import --allow`); "
                                  "a job's cluster is new, so restoring your own objects usually takes "
                                  "existing-accounts,objects-in-existing-datasets and, with models, models")
        command.add_argument("--import-trust", action="append", default=[], metavar="PUBLIC_KEY_FILE",
                             help="also take a snapshot signed by this key (`dataclay import --trust`); repeatable")
        command.add_argument("--timeout", type=float, default=START_TIMEOUT, metavar="SECONDS",
                             help=f"how long to wait for every server to be up (default {START_TIMEOUT:.0f})")
        command.add_argument("--warm-up", type=warm_up.calls_option, default=None, metavar="CALLS",
                             help="once the cluster is up, make CALLS calls on each backend first, so that the "
                                  "program's first calls are as fast as warm ones (20000 takes about 5 s; "
                                  "default: $DATACLAY_WARMUP or 0, none)")
    for command in (run, start, stop):
        command.add_argument("--job-dir", default=None, metavar="DIR",
                             help="the job's directory on the shared file system "
                                  "(default: $DATACLAY_SLURM_DIR/<job id>, i.e. ~/.dataclay/slurm/<job id>)")
        command.add_argument("--export", dest="export_dir", default=None, metavar="DIR",
                             help="save the objects (`dataclay export DIR`) before the cluster stops")
        command.add_argument("--signing-key", default=None, metavar="FILE",
                             help="sign exports with this key and trust imports it signed (default: "
                                  "snapshot-signing.key in the DATACLAY_HOME this command runs with, not the job's "
                                  "directory, so one job's export imports into the next)")
    run.add_argument("--grace", type=float, default=10.0, metavar="SECONDS",
                     help="after a stop signal, how long PROGRAM gets to end before it is killed (default 10)")
    run.add_argument("program", nargs=argparse.REMAINDER, help="-- PROGRAM ARGS: what to run against the cluster")
    node = commands.add_parser("node")  # a server step on its node (started by `start` through srun)
    node.add_argument("role", choices=slurm_node.ROLES)
    node.add_argument("job_dir")
    return parser


def say(message: str) -> None:
    """One line of what the launcher does, on standard error (the job's output)."""
    print(f"dataclay slurm: {message}", file=sys.stderr, flush=True)


class _Interrupted(Exception):
    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class StopSignals:
    """Records the first stop signal; interrupts a start in progress, tells a running program to end."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1)

    def __init__(self):
        self.received: int | None = None
        self.program: subprocess.Popen | None = None
        self.interrupt = False  # True while a start may be interrupted

    def install(self) -> "StopSignals":
        for sig in self.SIGNALS:
            signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if self.received is None:
            self.received = signum
            say(f"received {signal.Signals(signum).name}"
                + (": the job's time limit is near" if signum == signal.SIGUSR1 else "") + "; stopping")
        if self.program is not None and self.program.poll() is None:
            os.killpg(self.program.pid, signal.SIGTERM)
        elif self.interrupt:
            self.interrupt = False
            raise _Interrupted(signum)


def _plan(args, job_id: str, nodes: list[str], settings: SlurmSettings, cluster: ClusterSettings) -> JobPlan:
    """The job's plan from the options, each one checked."""
    engine = engines.engine(args.store, "--store") if args.store else \
        engines.engine(cluster.store) if cluster.store else engines.default_engine()
    if engine.database and not cluster.passthrough.get("DATACLAY_STORE_URL"):
        raise InvalidArgumentError(f"the {engine.name} engine needs DATACLAY_STORE_URL, the JDBC URL of its database")
    store = engine.name
    size = check_size(args.pool_size) if args.pool_size else cluster.store_size
    lm_node = args.lm_node or nodes[0]
    backends = args.backend_nodes.split() if args.backend_nodes is not None else list(nodes)
    if not backends:
        raise InvalidArgumentError("--backend-nodes names no node")
    unknown = [n for n in [lm_node, *backends] if n not in nodes]
    if unknown:
        raise InvalidArgumentError(f"{', '.join(sorted(set(unknown)))} not in this job's nodes "
                                   f"({', '.join(nodes)})")
    if len(set(backends)) != len(backends):
        raise InvalidArgumentError(f"--backend-nodes names a node twice: {args.backend_nodes!r}")
    if not _SUFFIX.match(args.host_suffix):
        raise InvalidArgumentError(f"--host-suffix may hold letters, digits, '.' and '-' only, not {args.host_suffix!r}")
    if not 0 <= args.port < 65536:
        raise InvalidArgumentError(f"--port must be a port number (or 0: a free one), not {args.port}")
    if args.timeout <= 0:
        raise InvalidArgumentError(f"--timeout must be positive, not {args.timeout}")
    pool_dir = pathlib.Path(args.pool_dir).absolute() if args.pool_dir else settings.pools_dir
    for kind, directory in (("import", args.import_dir), ("export", args.export_dir)):
        if directory:
            _check_snapshot_command(kind)
    if args.import_dir and not pathlib.Path(args.import_dir).is_dir():
        raise InvalidArgumentError(f"--import {args.import_dir}: no such directory")
    import_review.parse_allow(args.import_allow)
    for key in args.import_trust:
        signing.read_public_key(key)
    for model in args.model:
        _model(model)
    key = pathlib.Path(args.signing_key).absolute() if args.signing_key else signing.default_key(cluster.home)
    return JobPlan(job_id=job_id, lm_node=lm_node, backend_nodes=backends, store=store, store_size=size,
                   pool_dir=str(pool_dir), host_suffix=args.host_suffix, port=args.port,
                   client_files=[str(pathlib.Path(f).absolute()) for f in args.client_file],
                   export_dir=str(pathlib.Path(args.export_dir).absolute()) if args.export_dir else "",
                   signing_key=str(key), node_tag=secrets.token_hex(8))


def _model(text: str) -> tuple[str, str, str]:
    """NAMESPACE:LANGUAGE:PATH of --model, checked."""
    namespace, _, rest = text.partition(":")
    language, _, path = rest.partition(":")
    if not namespace or language not in ("python", "java") or not path:
        raise InvalidArgumentError(f"--model must be NAMESPACE:python|java:PATH, not {text!r}")
    if not pathlib.Path(path).exists():
        raise InvalidArgumentError(f"--model {text}: {path} does not exist")
    return namespace, language, str(pathlib.Path(path).absolute())


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "dataclay._internal.cli.cluster", *args]


def _check_snapshot_command(kind: str) -> None:
    """`dataclay export` and `dataclay import` are separate commands; say so when they are missing."""
    probe = subprocess.run(_cli(kind, "--help"), capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        raise InvalidArgumentError(f"--{kind} needs the `dataclay {kind}` command, which this installation "
                                   f"of dataClay does not have")


def program_env(job: JobDir) -> dict[str, str]:
    """The environment of the job's program: DATACLAY_HOME is the job directory (its client.properties)."""
    env = {k: v for k, v in os.environ.items() if k not in CONNECTION_KEYS}
    env["DATACLAY_HOME"] = str(job.path)
    return env


def _snapshot_options(args, plan: JobPlan, kind: str) -> list[str]:
    """What `dataclay import|export` gets besides the directory: the user's signing key, as the job's
    start found it (the job's DATACLAY_HOME is new for each job, and `stop` may run in the job's
    environment) and, for an import, what it may do and which keys it trusts."""
    key = args.signing_key or plan.signing_key or str(signing.default_key(ClusterSettings.from_env().home))
    options = ["--signing-key", str(pathlib.Path(key).absolute())]
    if kind == "import":
        options += [f"--allow={','.join(sorted(import_review.parse_allow(args.import_allow)))}"] \
            if args.import_allow else []
        for trusted in args.import_trust:
            options += ["--trust", str(pathlib.Path(trusted).absolute())]
    return options


def _snapshot(kind: str, directory: str, job: JobDir, options: list[str]) -> None:
    say(f"dataclay {kind} {' '.join(options)} {directory}")
    result = subprocess.run(_cli(kind, *options, directory), env=program_env(job), stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        raise DataClayException(f"`dataclay {kind} {directory}` failed with exit code {result.returncode}")


def _start(args, job: JobDir, plan: JobPlan, signals: StopSignals) -> JobCluster:
    cluster = JobCluster(job)
    began = time.monotonic()
    signals.interrupt = True
    try:
        files = cluster.start(plan, args.timeout)
    finally:
        signals.interrupt = False
    say(f"cluster up in {time.monotonic() - began:.1f} s: Logic Module on {plan.host(plan.lm_node)}, backends on "
        f"{', '.join(map(plan.host, plan.backend_nodes))}; client configuration: {', '.join(map(str, files))}")
    try:
        if args.import_dir:
            _snapshot("import", args.import_dir, job, _snapshot_options(args, plan, "import"))
        for model in args.model:
            namespace, language, path = _model(model)
            say(f"registering model {namespace} ({language}) from {path}")
            command = [sys.executable, "-m", "dataclay._internal.cli.admin.dataclaycmd", "NewModel", plan.user, "-",
                       namespace, path, language]
            if subprocess.run(command, env=program_env(job), stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL).returncode != 0:
                raise DataClayException(f"registering model {namespace} from {path} failed")
    except BaseException:
        plan.export_dir = ""  # nothing of the job's own was made yet
        for line in cluster.stop(plan):
            say(line)
        raise
    if args.warm_up:
        say(f"warming up: {args.warm_up:,} calls on each backend")
        try:
            say(warm_up.run(args.warm_up, job.path))
        except DataClayException as e:
            say(f"{e}\nthe cluster runs on without a warm-up")
    return cluster


def _run_program(argv: list[str], job: JobDir, signals: StopSignals, grace: float) -> int:
    try:
        program = subprocess.Popen(argv, env=program_env(job), start_new_session=True)
    except OSError as e:
        say(f"cannot run {argv[0]}: {e}")
        return 127
    signals.program = program
    if signals.received is not None:
        os.killpg(program.pid, signal.SIGTERM)
    deadline = None
    while True:
        try:
            code = program.wait(timeout=0.25)
            return 128 - code if code < 0 else code
        except subprocess.TimeoutExpired:
            if signals.received is not None:
                deadline = deadline or time.monotonic() + grace
                if time.monotonic() > deadline:
                    say(f"{argv[0]} did not end {grace:.0f} s after SIGTERM: killed")
                    os.killpg(program.pid, signal.SIGKILL)
                    deadline = float("inf")


def _stop(cluster: JobCluster, job: JobDir, plan: JobPlan, signals: StopSignals, args) -> bool:
    """Exports (unless the job was cancelled), stops and erases; True when everything was erased."""
    ok = True
    cancelled = signals.received not in (None, signal.SIGUSR1)
    if plan.export_dir and cancelled:
        say(f"not exporting to {plan.export_dir}: the job was cancelled (its servers are being stopped by Slurm)")
    elif plan.export_dir and plan.state == "running":
        try:
            _snapshot("export", plan.export_dir, job, _snapshot_options(args, plan, "export"))
        except DataClayException as e:
            say(str(e))
            ok = False
    for line in cluster.stop(plan):
        say(line)
        ok = ok and "NOT erased" not in line and "killed" not in line
    return ok


def main(argv: list[str]) -> int:
    """Entry point of `dataclay slurm`; returns the exit code."""
    args = _parser().parse_args(argv)
    if args.command == "node":
        return slurm_node.main(args.role, args.job_dir)
    signals = StopSignals().install()
    try:
        settings = SlurmSettings.from_env()
        job_id, nodes = allocation()
        job = JobDir(pathlib.Path(args.job_dir).absolute() if args.job_dir else settings.jobs_dir / job_id)
        if args.command == "stop":
            plan = job.load()
            if args.export_dir:
                _check_snapshot_command("export")
                plan.export_dir = str(pathlib.Path(args.export_dir).absolute())
            return 0 if _stop(JobCluster(job), job, plan, signals, args) else 1
        program = getattr(args, "program", [])
        program = program[1:] if program[:1] == ["--"] else program
        if args.command == "run" and not program:
            raise InvalidArgumentError("no program to run: dataclay slurm run [options] -- PROGRAM ARGS")
        cluster_settings = ClusterSettings.from_env()
        plan = _plan(args, job_id, nodes, settings, cluster_settings)
        if args.warm_up is None:
            args.warm_up = cluster_settings.warm_up
    except DataClayException as e:
        say(str(e))
        return 2
    try:
        cluster = _start(args, job, plan, signals)
    except (_Interrupted, DataClayException) as e:
        say(f"the cluster did not start: {e}")
        return 128 + e.signum if isinstance(e, _Interrupted) else 1
    if args.command == "start":
        return 0
    code = 1
    try:
        code = _run_program(program, job, signals, args.grace) if signals.received is None else 128 + signals.received
    finally:
        if not _stop(cluster, job, plan, signals, args) and code == 0:
            code = 1
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
