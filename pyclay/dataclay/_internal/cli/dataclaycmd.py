"""`dataclaycmd`: the dataClay 2 administration commands, with their names and argument order.

A password argument of `-` is read from DATACLAY_PASSWORD (NewAccount's, the new account's
password, from DATACLAY_NEW_PASSWORD or standard input). The Logic Module's address comes from the
client configuration (DATACLAY_HOST/DATACLAY_PORT or $DATACLAY_HOME/client.properties)."""
from __future__ import annotations

import datetime
import getpass
import json
import pathlib
import sys
import time
from contextlib import contextmanager

from dataclay.exceptions import DataClayException, InvalidArgumentError
from dataclay._internal.cli.java_model import read_java_model
from dataclay._internal.cli.listing_commands import get_aliases, get_datasets, get_objects
from dataclay._internal.cli.model_files import read_python_model
from dataclay._internal.config import Config
from dataclay._internal.proto import common_pb2
from dataclay._internal.rpc import LogicModuleClient, channels

USAGE = """usage: dataclaycmd COMMAND ARGS...
  NewAccount <user> <pass>                                  create an account (needs the administrator)
  NewDataContract <user> <pass> <dataset> <beneficiary> [--read-only] [--begins DATE] [--expires DATE]
                                                            grant beneficiary access to user's dataset
                                                            (a new one must be named <user>.<name>)
  NewDataset <user> <pass> <dataset>                        make a dataset of user's, named <user>.<name>
                                                            (administrators: any free name); a session's
                                                            default dataset is <user> itself
  RevokeDataContract <user> <pass> <dataset> <beneficiary>  take a data contract back
  GetDataContracts <user> <pass>                            list the contracts of user's datasets and to user
  GetDatasets <user> <pass> [--json] [--limit N]            the datasets user may see: owner, access, objects
  GetAliases <user> <pass> [<pattern>] [--dataset D] [--json] [--limit N]
                                                            aliases matching pattern (* any text, ? one character)
  GetObjects <user> <pass> [<class>] [--dataset D] [--json] [--limit N]
                                                            objects of a class (default: all): ID, backend, aliases
  GrantModelRegistration <user> <pass> <account>            let account register models (administrators)
  RevokeModelRegistration <user> <pass> <account>           stop account registering models (administrators)
  NewModel <user> <pass> <namespace> <class_path> <python|java>   register a model's classes
  PublishModel <user> <pass> <namespace>                    let every account use a model (owner or administrator)
  UnpublishModel <user> <pass> <namespace>                  only its owner and administrators use it again
  RemoveModel <user> <pass> <namespace> [--force]           remove a model and its code from every backend
  ListModels <user> <pass> [--json]                         the models user may use: owner, published, withdrawn
  GetStubs <user> <pass> <namespace> <stubs_path>           write a namespace's classes to stubs_path
  GetBackends <user> <pass>                                 list the backends
  WaitForDataClayToBeAlive <retries> <seconds>              wait for the Logic Module
  WaitForBackends <python|java> <n>                         wait for n live backends of a language
  CollectGarbage <user> <pass>                              collect garbage now (needs an administrator)
A model registered by an administrator starts published; anyone else's is usable only by its owner and
administrators until published. RemoveModel refuses while objects of the model's classes exist; --force
removes it anyway and leaves them unusable until a model with their classes is registered again.
A password of `-` is read from DATACLAY_PASSWORD; NewAccount's `-` reads the new account's password
from DATACLAY_NEW_PASSWORD, else from standard input. DATE is ISO 8601 (2027-01-31 or
2027-01-31T18:00:00+01:00; UTC when no offset is given)."""

WAIT_FOR_BACKENDS_SECONDS = 300


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


def get_data_contracts(config: Config, user: str, password: str) -> str:
    with _session(config, user, password) as lm:
        contracts = lm.list_data_contracts()
    lines = []
    for c in contracts:
        until = _show_ms(c.expires_at_ms) if c.expires_at_ms else "no end"
        lines.append(f"{c.dataset}  owner {c.owner}  -> {c.beneficiary}  {'read-only' if c.read_only else 'read-write'}"
                     f"  from {_show_ms(c.begins_at_ms)}  until {until}")
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
    from dataclay._internal.cli import model_changes
    with _session(config, user, password) as lm:
        before = model_changes.registered(lm, namespace)
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
    for option in options:
        if option != "--json":
            raise UsageError(f"unknown ListModels option {option!r} (the only one is --json)")
    with _session(config, user, password) as lm:
        models = lm.list_models()
    rows = [{"namespace": m.namespace, "language": common_pb2.Language.Name(m.language).lower(), "owner": m.owner,
             "version": m.version, "published": m.published, "withdrawn": m.withdrawn,
             "classes": [c.name for c in m.classes]} for m in models]
    if options:
        return json.dumps(rows, indent=2)
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


def get_backends(config: Config, user: str, password: str) -> str:
    with _session(config, user, password) as lm:
        backends = lm.get_backends()
    lines = []
    for b in backends:
        languages = ",".join(common_pb2.Language.Name(x).lower() for x in b.languages)
        lines.append(f"{b.id}  {b.name}  {b.host}:{b.port}  {languages}  {'alive' if b.alive else 'DOWN'}")
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


def wait_for_backends(config: Config, language: str, count: str) -> str:
    wanted = {"python": common_pb2.PYTHON, "java": common_pb2.JAVA}.get(language)
    if wanted is None:
        raise UsageError(f"language must be python or java, not {language!r}")
    n = _positive_int(count, "n")
    if not (config.user and config.password):
        raise InvalidArgumentError("WaitForBackends needs credentials: set DATACLAY_USER and DATACLAY_PASSWORD")
    deadline = time.monotonic() + WAIT_FOR_BACKENDS_SECONDS
    with _session(config, config.user, config.password) as lm:
        while True:
            alive = [b for b in lm.get_backends() if b.alive and wanted in b.languages]
            if len(alive) >= n:
                return f"{len(alive)} {language} backend(s) alive"
            if time.monotonic() > deadline:
                raise DataClayException(f"only {len(alive)} of {n} {language} backends alive "
                                    f"after {WAIT_FOR_BACKENDS_SECONDS} s")
            time.sleep(0.5)


def collect_garbage(config: Config, user: str, password: str) -> str:
    with _session(config, user, password) as lm:
        report = lm.collect_garbage()
    return f"collected {report.collected} of {report.examined} objects examined in {report.duration_ms} ms"


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


COMMANDS = {
    "NewAccount": (new_account, 2),
    "NewDataContract": (new_data_contract, (4, 9)),
    "NewDataset": (new_dataset, (3, 3)),
    "RevokeDataContract": (revoke_data_contract, 4),
    "GetDataContracts": (get_data_contracts, 2),
    "GetDatasets": (get_datasets, (2, 5)),
    "GetAliases": (get_aliases, (2, 8)),
    "GetObjects": (get_objects, (2, 8)),
    "GrantModelRegistration": (grant_model_registration, 3),
    "RevokeModelRegistration": (revoke_model_registration, 3),
    "NewModel": (new_model, 5),
    "PublishModel": (publish_model, 3),
    "UnpublishModel": (unpublish_model, 3),
    "RemoveModel": (remove_model, (3, 4)),
    "ListModels": (list_models, (2, 3)),
    "GetStubs": (get_stubs, 4),
    "GetBackends": (get_backends, 2),
    "WaitForDataClayToBeAlive": (wait_for_dataclay, 2),
    "WaitForBackends": (wait_for_backends, 2),
    "CollectGarbage": (collect_garbage, 2),
}


def main(argv: list[str] | None = None) -> int:
    """Entry point of `dataclaycmd`; returns the exit code (2: usage, 1: the command failed)."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if argv else 2
    command, args = argv[0], argv[1:]
    try:
        if command not in COMMANDS:
            raise UsageError(f"unknown command {command!r}")
        handler, arity = COMMANDS[command]
        low, high = arity if isinstance(arity, tuple) else (arity, arity)
        if not low <= len(args) <= high:
            takes = f"{low}" if low == high else f"{low} to {high}"
            raise UsageError(f"{command} takes {takes} arguments, got {len(args)}")
        config = Config.load()
        channels.configure(config.unreachable_ms)
        print(handler(config, *args))
        return 0
    except UsageError as e:
        print(f"dataclaycmd: {e}\n{USAGE}", file=sys.stderr)
        return 2
    except DataClayException as e:
        print(f"dataclaycmd {command}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
