"""`dataclay start | stop | status`: a whole local cluster on this machine, on embedded defaults;
`dataclay export | import`: snapshots of the cluster the client configuration names;
`dataclay dashboard | locate`: its web dashboard, and where an object lives."""
from __future__ import annotations

import argparse
import sys

from dataclay.exceptions import DataClayException, InvalidArgumentError
from dataclay._internal.cli.dashboard.dashboard import add_arguments as add_dashboard_arguments
from dataclay._internal.cli.dashboard.dashboard import configure_logging as configure_dashboard_logging
from dataclay._internal.cli.dashboard.dashboard import locate
from dataclay._internal.cli.dashboard.dashboard import serve as serve_dashboard
from dataclay._internal.cli.snapshot import import_review
from dataclay._internal.cli.common import progress
from dataclay._internal.cli.local import warm_up
from dataclay._internal.cli.common.cluster_state import ClusterState
from dataclay._internal.cli.local.launcher import LocalCluster
from dataclay._internal.cli.common.settings import ClusterSettings
from dataclay._internal.engines import ENGINE_NAMES
from dataclay._internal.cli.snapshot.snapshot_export import export_snapshot
from dataclay._internal.cli.snapshot.snapshot_import import import_snapshot
from dataclay._internal.config import Config
from dataclay._internal.cli.local.launcher import START_TIMEOUT, STOP_TIMEOUT
from dataclay._internal.cli.local.logs import show_logs
from dataclay._internal.cli.local.status_report import TIMEOUT, collect_status, exit_code, format_status, status_json
from dataclay._internal.version import DISTRIBUTION, VERSION

EPILOGUE = """exit codes: 0 done; 1 failed (the message says why); 2 wrong usage.
`dataclay status` exits 0 when the Logic Module and every backend answer, 1 when the Logic Module
does not, 3 when a backend is down or does not answer.
`dataclay COMMAND --help` explains one command."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dataclay", description="Start, stop and inspect a local dataClay cluster (state in $DATACLAY_HOME).",
        epilog=EPILOGUE, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-V", "--version", action="version", version=f"%(prog)s ({DISTRIBUTION}) {VERSION}")
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser(
        "start", help="start the Logic Module and N backends (restarts what is down)",
        description="Start the Logic Module and N backends on this machine (restarts what is down); "
                    "their logs go to $DATACLAY_HOME/logs (`dataclay logs`).",
        epilog="example: dataclay start --backends 2 --store kv", formatter_class=argparse.RawDescriptionHelpFormatter)
    start.add_argument("--backends", type=int, default=None, metavar="N",
                       help="number of Data Service backends (default: as many as before, or 1)")
    start.add_argument("--store", choices=ENGINE_NAMES, default=None,
                       help="store engine of the backends (default: $DATACLAY_STORE or kv)")
    start.add_argument("--metadata", default=None, metavar="JDBC_URL",
                       help="metadata database (default: $DATACLAY_METADATA_URL or the embedded database)")
    start.add_argument("--tls", action="store_true",
                       help="secure every connection with TLS: a private CA and server certificates in "
                            "$DATACLAY_HOME/tls; later starts keep TLS on")
    start.add_argument("--timeout", type=_seconds, default=START_TIMEOUT, metavar="SECONDS",
                       help=f"how long each server may take to come up (default {START_TIMEOUT:.0f})")
    start.add_argument("--warm-up", type=warm_up.calls_option, default=None, metavar="CALLS",
                       help="once the cluster is up, make CALLS calls on each backend first, so that programs' "
                            "first calls are as fast as warm ones (20000 takes about 5 s; default: "
                            "$DATACLAY_WARMUP or 0, none)")
    stop = commands.add_parser("stop", help="stop every process of the local cluster (clean shutdown)",
                               description="Stop every process of the local cluster: SIGTERM (a clean shutdown), "
                                           "SIGKILL after --timeout seconds.", epilog="example: dataclay stop")
    stop.add_argument("--timeout", type=_seconds, default=STOP_TIMEOUT, metavar="SECONDS",
                      help=f"how long each server may take to stop before it is killed (default {STOP_TIMEOUT:.0f})")
    stop.add_argument("--erase", action="store_true",
                      help="then overwrite and remove its pools (a postgres backend's rows: deleted) and its state in "
                           "$DATACLAY_HOME (metadata, logs, client.properties), so the next user of the node finds nothing")
    status = commands.add_parser(
        "status", help="backends, addresses, liveness, engines and object counts",
        description="The Logic Module and every backend: addresses, liveness, engines, object counts and "
                    "execution environments.",
        epilog="exit codes: 0 all up; 1 the Logic Module does not answer; 3 a backend is down or does not answer.\n"
               "example: dataclay status --json | jq .health", formatter_class=argparse.RawDescriptionHelpFormatter)
    status.add_argument("--json", action="store_true",
                        help="print one JSON document (health: up, degraded or down, then every field) instead of text")
    status.add_argument("--timeout", type=_seconds, default=TIMEOUT, metavar="SECONDS",
                        help=f"how long each server may take to answer (default {TIMEOUT:g})")
    logs = commands.add_parser(
        "logs", help="show the local cluster's logs (Logic Module and backends; model code's output is in its backend's)",
        description="Show the logs of the local cluster in $DATACLAY_HOME/logs: logicmodule.log and backend-N.log "
                    "(a backend's holds its execution environments' lines: what model code prints and logs, with "
                    "the account and the call). Without SERVER every log, each line prefixed with its server's name.",
        epilog="examples: dataclay logs backend-1 --follow\n          dataclay logs --lines 20",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    logs.add_argument("server", nargs="?", default=None, metavar="SERVER",
                      help="one server's log: logicmodule, backend-1, ... (default: all)")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing new lines, like tail -f, until Ctrl-C")
    logs.add_argument("-n", "--lines", type=_count, default=None, metavar="N",
                      help="only the last N lines of each log (default: all)")
    export_help = ("write a consistent snapshot of the cluster that client.properties / DATACLAY_* name (its "
                   "objects, aliases, replicas, versions, models, accounts, datasets and contracts) to DIR; "
                   "backup and stage-out")
    export = commands.add_parser("export", help=export_help, description=export_help[0].upper() + export_help[1:],
                                 epilog="example: dataclay export /scratch/me/snapshot-1")
    export.add_argument("directory", metavar="DIR", help="a new or empty directory (on a shared file system)")
    export.add_argument("--dataset", default="", metavar="D",
                        help="only dataset D: its objects, aliases, owner and contracts (and every model); references "
                             "to other datasets' objects are not followed")
    export.add_argument("--password-hashes", action="store_true",
                        help="also the accounts' salted password hashes (default: names and roles only)")
    export.add_argument("--signing-key", metavar="FILE", default=None,
                        help="sign the snapshot with this Ed25519 key (default: $DATACLAY_HOME/snapshot-signing.key, "
                             "made on first need, mode 0600, with its public half beside it in snapshot-signing.pub)")
    export.add_argument("--progress", action="store_true",
                        help="show progress on standard error even when it is not a terminal")
    import_help = ("load a snapshot from DIR into the cluster client.properties / DATACLAY_* name (new or "
                   "empty, any size and engines), all or nothing; restore and stage-in")
    load = commands.add_parser("import", help=import_help, description=import_help[0].upper() + import_help[1:],
                               epilog="example: dataclay import --dry-run /scratch/me/snapshot-1")
    load.add_argument("directory", metavar="DIR", help="a directory `dataclay export` wrote")
    load.add_argument("--passwords-file", metavar="FILE", default=None,
                      help="create the snapshot's accounts this cluster lacks (and whose hashes it does not hold or "
                           "--allow does not let in) with new random passwords, written to FILE (a new file, mode "
                           "0600)")
    load.add_argument("--allow", action="append", default=[], metavar="NAME,...", help=import_review.help_text())
    load.add_argument("--trust", action="append", default=[], metavar="PUBLIC_KEY_FILE",
                      help="also take snapshots signed by this key (the snapshot-signing.pub of whoever exported "
                           "it; PEM or an OpenSSH ssh-ed25519 line); repeatable. By default an import takes only "
                           "snapshots signed by your own key (--signing-key)")
    load.add_argument("--signing-key", metavar="FILE", default=None,
                      help="your own snapshot signing key, whose snapshots are trusted (default: "
                           "$DATACLAY_HOME/snapshot-signing.key)")
    load.add_argument("--dry-run", action="store_true",
                      help="check the snapshot and print what the import would create and touch, and what it needs "
                           "allowed; change nothing")
    load.add_argument("--progress", action="store_true",
                      help="show progress on standard error even when it is not a terminal")
    dashboard_help = ("serve the web dashboard of the cluster client.properties / DATACLAY_* name: backends, calls "
                      "per second with p50 and p99, models, sessions, datasets, GC and failover history, and where "
                      "an object lives")
    dashboard = commands.add_parser(
        "dashboard", help=dashboard_help, description=dashboard_help[0].upper() + dashboard_help[1:] + ". Log in "
        "with an administrator account; it runs until Ctrl-C.",
        epilog="example: dataclay dashboard --port 8765   (then open http://localhost:8765/)\n"
               "beyond this machine: dataclay dashboard --host 0.0.0.0 --cert dash.pem --key dash.key",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_dashboard_arguments(dashboard)
    locate = commands.add_parser(
        "locate", help="where an object lives (by alias or ID): its backends, replicas and versions, as JSON",
        description="Where an object lives, found by its ID or by an alias in any dataset your account may read: "
                    "class, dataset, aliases, master and replica backends, and versions; one JSON document, the "
                    "same as the dashboard's /api/v1/locate.",
        epilog="example: dataclay locate my-counter | jq '.objects[].master.name'")
    locate.add_argument("query", metavar="ALIAS_OR_ID")
    commands.add_parser("slurm", add_help=False,
                        help="a cluster on the nodes of a Slurm job: `dataclay slurm run|start|stop` (see --help)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `dataclay` command; returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["slurm"]:
        from dataclay._internal.cli.slurm import slurm
        return slurm.main(argv[1:])
    args = _parser().parse_args(argv)
    try:
        if args.command in ("export", "import"):
            return _snapshot(args)
        if args.command == "dashboard":
            configure_dashboard_logging()
            return serve_dashboard(args)
        if args.command == "locate":
            return locate(args.query)
        settings = ClusterSettings.from_env()
        cluster = LocalCluster(settings)
        if args.command == "logs":
            if not cluster.check_home():
                raise InvalidArgumentError(f"no local cluster: DATACLAY_HOME={settings.home} does not exist; start one "
                                           f"with `dataclay start`, or set DATACLAY_HOME to the cluster's home")
            show_logs(settings.home, args.server, args.follow, args.lines)
            return 0
        if args.command == "start":
            calls = settings.warm_up if args.warm_up is None else args.warm_up
            state = cluster.start(args.backends, args.store, args.metadata, tls=args.tls, timeout=args.timeout)
            for note in cluster.notes:
                print(f"dataclay start: {note}", file=sys.stderr)
            if calls:
                try:
                    with progress.waiting(f"warming up: {calls:,} calls on each backend"):
                        print(warm_up.run(calls, settings.home))
                except warm_up.WarmUpError as e:
                    print(f"dataclay start: {e}\nthe cluster runs on without a warm-up", file=sys.stderr)
            print(f"dataClay is running: Logic Module on 127.0.0.1:{state.lm.port}, "
                  f"{len(state.backends)} backend(s), store {state.store} in {state.store_root}")
            if state.tls:
                print(f"TLS on every connection; clients need the CA certificate {cluster.certificates.ca_file}")
            print(f"client configuration: {cluster.client_file} (read by api.init() and dataclaycmd)")
            return 0
        if args.command == "stop":
            stopped = cluster.stop(args.timeout)
            print("stopped " + ", ".join(stopped) if stopped else "nothing was running")
            if args.erase:
                for line in cluster.erase():
                    print(line)
            return 0
        cluster.check_home()
        report = collect_status(settings.home, ClusterState.load(settings.home), args.timeout)
        print(status_json(report) if args.json else format_status(report))
        return exit_code(report)
    except DataClayException as e:
        print(f"dataclay {args.command}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0 if args.command == "logs" else 130


def _seconds(text: str) -> float:
    """A --timeout value: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}")
    return value


def _count(text: str) -> int:
    """A --lines value: a non-negative whole number."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}")
    return int(text)


def _snapshot(args) -> int:
    progress = True if args.progress else None
    if args.command == "export":
        lines = export_snapshot(Config.load(), args.directory, args.dataset, args.password_hashes, progress,
                                args.signing_key)
    else:
        lines = import_snapshot(Config.load(), args.directory, args.passwords_file, progress, allow=args.allow,
                                trust=args.trust, signing_key=args.signing_key, dry_run=args.dry_run,
                                say=lambda line: print(line, flush=True))
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
