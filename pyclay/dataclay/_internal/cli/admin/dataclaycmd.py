"""`dataclaycmd`: the dataClay 2 administration commands, with their names and argument order.

A password argument of `-` is read from DATACLAY_PASSWORD (NewAccount's, the new account's
password, from DATACLAY_NEW_PASSWORD or standard input). The Logic Module's address comes from the
client configuration (DATACLAY_HOST/DATACLAY_PORT or $DATACLAY_HOME/client.properties).

Each command is one entry of COMMANDS (a Command: what it runs, how many arguments it takes, its
synopsis, summary, details and example), from which `--help`, `help COMMAND`, `COMMAND --help` and
the usage printed on a wrong number of arguments are all made. A new command is a function and one
entry. Commands that print tables take `--json` (one JSON document, fixed keys: see _json_option)."""
from __future__ import annotations

import datetime
import getpass
import json
import pathlib
import sys
import time
from contextlib import contextmanager

from dataclay.exceptions import DataClayException, InvalidArgumentError
from dataclay._internal.cli.admin.command_help import Command, command_help, command_list, usage_line
from dataclay._internal.cli.admin import model_changes
from dataclay._internal.cli.admin.java_model import read_java_model
from dataclay._internal.cli.admin.listing_commands import get_aliases, get_datasets, get_objects
from dataclay._internal.cli.admin.model_files import read_python_model
from dataclay._internal.cli.common import progress
from dataclay._internal.config import Config
from dataclay._internal.proto import common_pb2
from dataclay._internal.rpc import LogicModuleClient, channels
from dataclay._internal.version import DISTRIBUTION, VERSION

TOOL = "dataclaycmd"

DEFAULT_WAIT_SECONDS = 300  # WaitForBackends --timeout


class UsageError(Exception):
    """The command line is wrong; the message says how."""


def _address(config: Config) -> str:
    return f"{config.host}:{config.port}"


def _password(config: Config, given: str) -> str:
    if given != "-":
        return given
    if not config.password:
        raise InvalidArgumentError("password `-` given but DATACLAY_PASSWORD is not set")
    return config.password


@contextmanager
def _session(config: Config, user: str, password: str):
    """A Logic Module client with an open session for `user`, closed afterwards."""
    client = LogicModuleClient(_address(config), tls=config.tls)
    try:
        client.token = client.new_session(user, _password(config, password), "").token
        yield client
        client.close_session()
    finally:
        client.close()


def new_account(config: Config, user: str, password: str) -> str:
    if not (config.user and config.password):
        raise InvalidArgumentError("NewAccount needs the administrator's credentials: set DATACLAY_USER and "
                                   "DATACLAY_PASSWORD, or run where `dataclay start` wrote client.properties")
    new_password = _new_password(config, user) if password == "-" else password
    with _session(config, config.user, config.password) as lm:
        lm.new_account(user, new_password)
    return f"account {user} created (its dataset is {user})"


def _new_password(config: Config, user: str) -> str:
    """A new account's password from DATACLAY_NEW_PASSWORD, else standard input (asked twice on a terminal)."""
    if config.new_password:
        return config.new_password
    if sys.stdin.isatty():
        first = getpass.getpass(f"password for {user}: ")
        if getpass.getpass(f"password for {user} (again): ") != first:
            raise InvalidArgumentError("the two passwords differ")
        return first
    line = sys.stdin.readline().rstrip("\r\n")
    if not line:
        raise InvalidArgumentError("password `-` given but neither DATACLAY_NEW_PASSWORD nor standard input "
                                   "holds one")
    return line


def new_dataset(config: Config, user: str, password: str, dataset: str) -> str:
    """Makes a dataset of `user` (its first contract, with `user` itself); existing ones of user's are kept."""
    with _session(config, user, password) as lm:
        lm.new_data_contract(dataset, user, read_only=False, begins_at_ms=0, expires_at_ms=0)
    return f"dataset {dataset} of {user} is ready: Client(..., dataset={dataset!r}) or DATACLAY_DATASET={dataset}"


def new_data_contract(config: Config, user: str, password: str, dataset: str, beneficiary: str,
                      *options: str) -> str:
    terms = _contract_options(options)
    with _session(config, user, password) as lm:
        lm.new_data_contract(dataset, beneficiary, **terms)
    access = "read" if terms["read_only"] else "read and change"
    window = ""
    if terms["begins_at_ms"]:
        window += f" from {_show_ms(terms['begins_at_ms'])}"
    if terms["expires_at_ms"]:
        window += f" until {_show_ms(terms['expires_at_ms'])}"
    return f"{beneficiary} can now {access} dataset {dataset}{window}"


def _contract_options(options) -> dict:
    terms = {"read_only": False, "begins_at_ms": 0, "expires_at_ms": 0}
    rest = list(options)
    while rest:
        flag = rest.pop(0)
        if flag == "--read-only":
            terms["read_only"] = True
        elif flag in ("--begins", "--expires"):
            if not rest:
                raise UsageError(f"{flag} needs a DATE")
            terms["begins_at_ms" if flag == "--begins" else "expires_at_ms"] = _epoch_ms(rest.pop(0), flag)
        else:
            raise UsageError(f"unknown NewDataContract option {flag!r}")
    return terms


def _epoch_ms(text: str, flag: str) -> int:
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"{flag} must be an ISO 8601 date such as 2027-01-31, not {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return int(moment.timestamp() * 1000)


def _show_ms(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).isoformat(timespec="seconds")


def revoke_data_contract(config: Config, user: str, password: str, dataset: str, beneficiary: str) -> str:
    with _session(config, user, password) as lm:
        lm.revoke_data_contract(dataset, beneficiary)
    return f"{beneficiary} can no longer use dataset {dataset}"


def get_data_contracts(config: Config, user: str, password: str, *options: str) -> str:
    as_json = _json_option("GetDataContracts", options)
    with _session(config, user, password) as lm:
        contracts = lm.list_data_contracts()
    rows = [{"dataset": c.dataset, "owner": c.owner, "beneficiary": c.beneficiary, "read_only": c.read_only,
             "begins": _show_ms(c.begins_at_ms), "expires": _show_ms(c.expires_at_ms) if c.expires_at_ms else None}
            for c in contracts]
    if as_json:
        return _json(rows)
    lines = [f"{r['dataset']}  owner {r['owner']}  -> {r['beneficiary']}  "
             f"{'read-only' if r['read_only'] else 'read-write'}  from {r['begins']}  until {r['expires'] or 'no end'}"
             for r in rows]
    return "\n".join(lines) if lines else "no data contracts"


def grant_model_registration(config: Config, user: str, password: str, account: str) -> str:
    with _session(config, user, password) as lm:
        lm.set_model_registration(account, True)
    return f"{account} may now register models (their code runs in every backend)"


def revoke_model_registration(config: Config, user: str, password: str, account: str) -> str:
    with _session(config, user, password) as lm:
        lm.set_model_registration(account, False)
    return f"{account} may no longer register models"


def new_model(config: Config, user: str, password: str, namespace: str, class_path: str, language: str) -> str:
    if language == "python":
        model = read_python_model(namespace, class_path)
    elif language == "java":
        model = read_java_model(namespace, class_path)
    else:
        raise UsageError(f"language must be python or java, not {language!r}")
    with _session(config, user, password) as lm:
        before = model_changes.registered(lm, namespace)
        with progress.waiting(f"registering model {namespace} on every backend"):
            lm.register_model(model)
    names = ", ".join(c.name for c in model.classes)
    unit = "module(s)" if language == "python" else "class file(s)"
    return (f"registered namespace {namespace}: {len(model.files)} {unit}, classes {names}"
            + model_changes.report(before, model))


def publish_model(config: Config, user: str, password: str, namespace: str) -> str:
    with _session(config, user, password) as lm:
        lm.set_model_published(namespace, True)
    return f"model {namespace} is published: every account may use its classes"


def unpublish_model(config: Config, user: str, password: str, namespace: str) -> str:
    with _session(config, user, password) as lm:
        lm.set_model_published(namespace, False)
    return f"model {namespace} is no longer published: only its owner and administrators may use its classes"


def remove_model(config: Config, user: str, password: str, namespace: str, *options: str) -> str:
    for option in options:
        if option != "--force":
            raise UsageError(f"unknown RemoveModel option {option!r} (the only one is --force)")
    with _session(config, user, password) as lm:
        left = lm.remove_model(namespace, force=bool(options))
    message = f"removed model {namespace} and its code from every backend; the namespace is free again"
    if left:
        message += (f"\n{left} object(s) of its classes stay, unusable until a model with their classes is "
                    f"registered again")
    return message


def list_models(config: Config, user: str, password: str, *options: str) -> str:
    as_json = _json_option("ListModels", options)
    with _session(config, user, password) as lm:
        models = lm.list_models()
    rows = [{"namespace": m.namespace, "language": common_pb2.Language.Name(m.language).lower(), "owner": m.owner,
             "version": m.version, "published": m.published, "withdrawn": m.withdrawn,
             "classes": [c.name for c in m.classes]} for m in models]
    if as_json:
        return _json(rows)
    lines = [f"{r['namespace']}  {r['language']}  owner {r['owner']}  v{r['version']}  "
             f"{'published' if r['published'] else 'unpublished'}"
             f"{'  WITHDRAWN (its owner may no longer register models)' if r['withdrawn'] else ''}"
             f"  {', '.join(r['classes'])}" for r in rows]
    return "\n".join(lines) if lines else "no models you may use"


def get_stubs(config: Config, user: str, password: str, namespace: str, stubs_path: str) -> str:
    with _session(config, user, password) as lm:
        model = lm.get_model(namespace)
    root = pathlib.Path(stubs_path).resolve()
    for f in model.files:
        target = (root / f.path).resolve()
        if root not in target.parents:
            raise InvalidArgumentError(f"model file path {f.path!r} escapes {stubs_path!r}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(f.content)
    return f"wrote {len(model.files)} file(s) of namespace {namespace} to {root}"


def get_backends(config: Config, user: str, password: str, *options: str) -> str:
    as_json = _json_option("GetBackends", options)
    with _session(config, user, password) as lm:
        backends = lm.get_backends()
    rows = [{"id": b.id, "name": b.name, "host": b.host, "port": b.port,
             "languages": [common_pb2.Language.Name(x).lower() for x in b.languages], "alive": b.alive}
            for b in backends]
    if as_json:
        return _json(rows)
    lines = [f"{r['id']}  {r['name']}  {r['host']}:{r['port']}  {','.join(r['languages'])}  "
             f"{'alive' if r['alive'] else 'DOWN'}" for r in rows]
    return "\n".join(lines) if lines else "no backends"


def wait_for_dataclay(config: Config, retries: str, seconds: str) -> str:
    tries, pause = _positive_int(retries, "retries"), _positive_float(seconds, "seconds")
    client = LogicModuleClient(_address(config), tls=config.tls)
    last = None
    try:
        for attempt in range(tries):
            try:
                version = client.health(timeout=max(pause, 1.0))
                return f"dataClay {version} is alive at {_address(config)}"
            except DataClayException as e:
                last = e
                if attempt + 1 < tries:
                    time.sleep(pause)
    finally:
        client.close()
    raise DataClayException(f"the Logic Module at {_address(config)} did not answer after {tries} tries ({last})")


def wait_for_backends(config: Config, language: str, count: str, *options: str) -> str:
    wanted = {"python": common_pb2.PYTHON, "java": common_pb2.JAVA}.get(language)
    if wanted is None:
        raise UsageError(f"language must be python or java, not {language!r}")
    n = _positive_int(count, "n")
    seconds = float(DEFAULT_WAIT_SECONDS)
    if options:
        if options[0] != "--timeout" or len(options) != 2:
            raise UsageError(f"unknown WaitForBackends option {' '.join(options)!r} (the only one is --timeout SECONDS)")
        seconds = _positive_float(options[1], "SECONDS")
    if not (config.user and config.password):
        raise InvalidArgumentError("WaitForBackends needs credentials: set DATACLAY_USER and DATACLAY_PASSWORD")
    deadline = time.monotonic() + seconds
    with _session(config, config.user, config.password) as lm:
        while True:
            alive = [b for b in lm.get_backends() if b.alive and wanted in b.languages]
            if len(alive) >= n:
                return f"{len(alive)} {language} backend(s) alive"
            if time.monotonic() > deadline:
                raise DataClayException(f"only {len(alive)} of {n} {language} backends alive after {seconds:g} s "
                                        f"(wait longer with --timeout SECONDS)")
            time.sleep(0.5)


def collect_garbage(config: Config, user: str, password: str) -> str:
    with _session(config, user, password) as lm:
        with progress.waiting("collecting garbage"):
            report = lm.collect_garbage()
    return f"collected {report.collected} of {report.examined} objects examined in {report.duration_ms} ms"


def _json_option(command: str, options) -> bool:
    """True when `options` is ("--json",), False when it is empty; anything else is a UsageError."""
    for option in options:
        if option != "--json":
            raise UsageError(f"unknown {command} option {option!r} (the only one is --json)")
    return bool(options)


def _json(rows) -> str:
    """One JSON document (what --json prints): keys in a fixed order, never sorted or dropped."""
    return json.dumps(rows, indent=2)


def _positive_int(text: str, what: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"<{what}> must be a positive integer, not {text!r}")
    return int(text)


def _positive_float(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value < 0:
        raise UsageError(f"<{what}> must be a number of seconds, not {text!r}")
    return value


PASSWORD_NOTE = "A password of `-` is read from DATACLAY_PASSWORD."

COMMANDS = {
    "NewAccount": Command(
        new_account, 2, "<user> <pass>", "create an account (needs the administrator)",
        "Runs as the administrator of client.properties or DATACLAY_USER/DATACLAY_PASSWORD. A <pass> of `-` "
        "reads the new account's password from DATACLAY_NEW_PASSWORD, else from standard input (asked twice on "
        "a terminal). The account's default dataset is named after it.",
        "DATACLAY_NEW_PASSWORD=... dataclaycmd NewAccount alice -"),
    "NewDataContract": Command(
        new_data_contract, (4, 9), "<user> <pass> <dataset> <beneficiary> [--read-only] [--begins DATE] "
        "[--expires DATE]", "grant beneficiary access to user's dataset",
        "A new dataset must be named <user>.<name>. Granting again replaces the earlier terms. DATE is ISO 8601 "
        "(2027-01-31 or 2027-01-31T18:00:00+01:00; UTC when no offset is given). " + PASSWORD_NOTE,
        "dataclaycmd NewDataContract alice - alice.results bob --read-only --expires 2027-01-31"),
    "NewDataset": Command(
        new_dataset, (3, 3), "<user> <pass> <dataset>", "make a dataset of user's, named <user>.<name>",
        "Administrators may use any free name. A session's default dataset is <user> itself; pick another "
        "with Client(..., dataset=...) or DATACLAY_DATASET. " + PASSWORD_NOTE,
        "dataclaycmd NewDataset alice - alice.results"),
    "RevokeDataContract": Command(
        revoke_data_contract, 4, "<user> <pass> <dataset> <beneficiary>", "take a data contract back",
        PASSWORD_NOTE, "dataclaycmd RevokeDataContract alice - alice.results bob"),
    "GetDataContracts": Command(
        get_data_contracts, (2, 3), "<user> <pass> [--json]", "list the contracts of user's datasets and to user",
        "--json prints one JSON list of {dataset, owner, beneficiary, read_only, begins, expires} (expires: "
        "null for no end). " + PASSWORD_NOTE, "dataclaycmd GetDataContracts alice - --json"),
    "GetDatasets": Command(
        get_datasets, (2, 5), "<user> <pass> [--json] [--limit N]", "the datasets user may see: owner, access, objects",
        "Its own datasets and those of data contracts in force (an administrator: every dataset). --json prints "
        "one JSON list of {name, owner, access, objects, contract_expires_at}. " + PASSWORD_NOTE,
        "dataclaycmd GetDatasets alice -"),
    "GetAliases": Command(
        get_aliases, (2, 8), "<user> <pass> [<pattern>] [--dataset D] [--json] [--limit N]",
        "aliases matching pattern (* any text, ? one character)",
        "Every other character in the pattern is itself; quote it so the shell leaves * alone. Without --dataset, "
        "every dataset user may see. --json prints one JSON list of {alias, dataset, object_id, class, language, "
        "backend_id, backend}. " + PASSWORD_NOTE,
        "dataclaycmd GetAliases alice - 'run_*' --dataset alice.results"),
    "GetObjects": Command(
        get_objects, (2, 8), "<user> <pass> [<class>] [--dataset D] [--json] [--limit N]",
        "objects of a class (default: every class): ID, backend, aliases",
        "<class> is module.Class (Python) or the Java class name. --json prints one JSON list of objects. "
        + PASSWORD_NOTE, "dataclaycmd GetObjects alice - people.model.Person --limit 20"),
    "GrantModelRegistration": Command(
        grant_model_registration, 3, "<user> <pass> <account>", "let account register models (administrators)",
        "A model's code runs in every backend, confined, with its caller's authority. " + PASSWORD_NOTE,
        "dataclaycmd GrantModelRegistration admin - alice"),
    "RevokeModelRegistration": Command(
        revoke_model_registration, 3, "<user> <pass> <account>", "stop account registering models (administrators)",
        "Its models are withdrawn: their code is unloaded from every backend. " + PASSWORD_NOTE,
        "dataclaycmd RevokeModelRegistration admin - alice"),
    "NewModel": Command(
        new_model, 5, "<user> <pass> <namespace> <class_path> <python|java>", "register a model's classes",
        "<class_path> is the directory holding the model's packages (Python: the directory you would put on "
        "PYTHONPATH; Java: compiled classes or a jar). Registering again replaces the model's code. A model "
        "registered by an administrator starts published; anyone else's is usable only by its owner and "
        "administrators until PublishModel. Clients import the same classes: keep class_path on their "
        "PYTHONPATH or fetch the code with GetStubs. " + PASSWORD_NOTE,
        "dataclaycmd NewModel admin - people ./model python"),
    "PublishModel": Command(
        publish_model, 3, "<user> <pass> <namespace>", "let every account use a model (owner or administrator)",
        PASSWORD_NOTE, "dataclaycmd PublishModel alice - people"),
    "UnpublishModel": Command(
        unpublish_model, 3, "<user> <pass> <namespace>", "only its owner and administrators use it again",
        PASSWORD_NOTE, "dataclaycmd UnpublishModel alice - people"),
    "RemoveModel": Command(
        remove_model, (3, 4), "<user> <pass> <namespace> [--force]", "remove a model and its code from every backend",
        "Refused while objects of the model's classes exist; --force removes it anyway and leaves them unusable "
        "until a model with their classes is registered again. " + PASSWORD_NOTE,
        "dataclaycmd RemoveModel alice - people"),
    "ListModels": Command(
        list_models, (2, 3), "<user> <pass> [--json]", "the models user may use: owner, published, withdrawn",
        "--json prints one JSON list of {namespace, language, owner, version, published, withdrawn, classes}. "
        + PASSWORD_NOTE, "dataclaycmd ListModels alice - --json"),
    "GetStubs": Command(
        get_stubs, 4, "<user> <pass> <namespace> <stubs_path>", "write a namespace's classes to stubs_path",
        "Writes the model's files as registered; put stubs_path on the client's PYTHONPATH (or classpath). "
        + PASSWORD_NOTE, "dataclaycmd GetStubs alice - people ./stubs"),
    "GetBackends": Command(
        get_backends, (2, 3), "<user> <pass> [--json]", "list the backends",
        "One line each: ID, name, address, languages, alive or DOWN. --json prints one JSON list of "
        "{id, name, host, port, languages, alive}. " + PASSWORD_NOTE, "dataclaycmd GetBackends admin - --json"),
    "WaitForDataClayToBeAlive": Command(
        wait_for_dataclay, 2, "<retries> <seconds>", "wait for the Logic Module",
        "Asks the Logic Module up to <retries> times, <seconds> apart; exits 1 if it never answers.",
        "dataclaycmd WaitForDataClayToBeAlive 30 1"),
    "WaitForBackends": Command(
        wait_for_backends, (2, 4), "<python|java> <n> [--timeout SECONDS]", "wait for n live backends of a language",
        f"Needs DATACLAY_USER/DATACLAY_PASSWORD (or client.properties). Gives up after --timeout seconds "
        f"(default {DEFAULT_WAIT_SECONDS}) and exits 1.",
        "dataclaycmd WaitForBackends python 2 --timeout 60"),
    "CollectGarbage": Command(
        collect_garbage, 2, "<user> <pass>", "collect garbage now (needs an administrator)",
        "Removes the objects no alias and no other object reaches. " + PASSWORD_NOTE,
        "dataclaycmd CollectGarbage admin -"),
}

EPILOGUE = """A model registered by an administrator starts published; anyone else's is usable only by its owner and
administrators until published. A password of `-` is read from DATACLAY_PASSWORD; NewAccount's `-` reads the
new account's password from DATACLAY_NEW_PASSWORD, else from standard input. The Logic Module's address comes
from DATACLAY_HOST/DATACLAY_PORT or $DATACLAY_HOME/client.properties.
Options: --version, --help. Exit codes: 0 done, 1 the command failed (the message says why), 2 wrong usage."""


def usage() -> str:
    """The list of every command (what `dataclaycmd --help` prints)."""
    return command_list(TOOL, COMMANDS, EPILOGUE)


def main(argv: list[str] | None = None) -> int:
    """Entry point of `dataclaycmd`; returns the exit code (2: usage, 1: the command failed)."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(usage(), file=sys.stderr)
        return 2
    if argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    if argv[0] in ("-V", "--version"):
        print(f"{TOOL} ({DISTRIBUTION}) {VERSION}")
        return 0
    if argv[0] == "help":
        if len(argv) == 1:
            print(usage())
            return 0
        if argv[1] not in COMMANDS:
            print(f"{TOOL}: unknown command {argv[1]!r}\n{usage()}", file=sys.stderr)
            return 2
        print(command_help(TOOL, argv[1], COMMANDS[argv[1]]))
        return 0
    name, args = argv[0], argv[1:]
    command = COMMANDS.get(name)
    if command is None:
        print(f"{TOOL}: unknown command {name!r}\n{usage()}", file=sys.stderr)
        return 2
    if any(a in ("-h", "--help") for a in args):
        print(command_help(TOOL, name, command))
        return 0
    try:
        if not command.accepts(len(args)):
            low, high = command.bounds()
            takes = f"{low}" if low == high else f"{low} to {high}"
            raise UsageError(f"{name} takes {takes} arguments, got {len(args)}")
        config = Config.load()
        channels.configure(config.unreachable_ms)
        print(command.run(config, *args))
        return 0
    except UsageError as e:
        print(f"{TOOL}: {e}\n{usage_line(TOOL, name, command)}\n(more: {TOOL} help {name})", file=sys.stderr)
        return 2
    except DataClayException as e:
        print(f"{TOOL} {name}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
