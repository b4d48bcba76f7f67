"""What `dataclay import` tells its administrator before it changes anything, and what they allow
it to do (`--allow`). A snapshot is its author's: beyond new datasets with their objects, aliases
and contracts, everything it would do to the cluster needs an allowance by name. The Logic Module
enforces the allowances (ImportPlan.allowed); this module names them and describes the plan."""
from __future__ import annotations

import collections
import datetime

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.proto import common_pb2, logicmodule_pb2 as lm_pb2

# the --allow names, in the order they are explained; each is an ImportAllowed field with '_' for '-'
ALLOWANCES = {
    "accounts": "create the snapshot's accounts this cluster lacks",
    "admins": "create them as administrators, or with the right to register models, where the snapshot says so",
    "password-hashes": "create them with the snapshot's password hashes (whoever made it may know the "
                       "passwords; without this they get new ones, see --passwords-file)",
    "existing-accounts": "let the snapshot name accounts this cluster has: its datasets, contracts and models "
                         "attach to them (the accounts themselves are left as they are)",
    "contracts-on-existing-datasets": "grant or change contracts on datasets this cluster has",
    "objects-in-existing-datasets": "add objects and aliases to datasets this cluster has",
    "models": "register the snapshot's models: code that runs in the backends",
}


def parse_allow(values: list) -> frozenset:
    """The allowances of --allow options (each a comma-separated list of names)."""
    names = {name.strip() for value in values for name in value.split(",") if name.strip()}
    unknown = sorted(names - set(ALLOWANCES))
    if unknown:
        raise InvalidArgumentError(f"--allow: unknown {', '.join(map(repr, unknown))}; the names are "
                                   f"{', '.join(ALLOWANCES)}")
    return frozenset(names)


def allowed_message(allowed: frozenset) -> lm_pb2.ImportAllowed:
    return lm_pb2.ImportAllowed(**{name.replace("-", "_"): True for name in allowed})


def help_text() -> str:
    """The --allow help: every name and what it lets an import do."""
    return ("let the import do more than add new datasets with their objects, aliases and contracts; a "
            "comma-separated list of: " + "; ".join(f"{name}: {what}" for name, what in ALLOWANCES.items())
            + ". Repeatable. Without it, an import needing any of these is refused (--dry-run shows what it needs)")


def objects_per_dataset(index) -> collections.Counter:
    """How many of the snapshot's objects each dataset receives."""
    return collections.Counter(index.dataset_names[index.dataset_of[r]] for r in index.chosen.values())


def describe(index, opened, placement, backends: int, hashes_sent: bool, new_passwords: dict, passwords,
             allowed: frozenset) -> list:
    """The lines that say what the import creates and what of the cluster's own it touches."""
    manifest = index.manifest
    cut = datetime.datetime.fromtimestamp(manifest.cut_at_ms / 1000, datetime.timezone.utc).isoformat()
    lines = [f"snapshot {manifest.snapshot_id} of {manifest.source.get('logic_module', '?')} (cut at {cut}), "
             f"signed by {index.signer}"]
    creates = [a for a in index.accounts if a.username in set(opened.accounts_to_create)]
    if creates:
        lines.append("accounts it creates:")
        lines.extend(f"  {a.username}: {_roles(a)}; password: {_password(a, hashes_sent, new_passwords, passwords)}"
                     for a in creates)
    if opened.existing_accounts:
        lines.append(f"accounts of this cluster it names (left as they are; what the snapshot gives them attaches "
                     f"to them): {', '.join(opened.existing_accounts)}")
    existing = set(opened.existing_datasets)
    objects = objects_per_dataset(index)
    aliases = collections.Counter(a.dataset for a in index.aliases)
    if index.datasets:
        lines.append("datasets:")
        lines.extend(f"  {d.name} (owner {d.owner}, {'EXISTS HERE' if d.name in existing else 'new'}): "
                     f"{objects[d.name]:,} objects, {aliases[d.name]:,} aliases" for d in index.datasets)
    if index.contracts:
        lines.append("contracts:")
        lines.extend(f"  {k.beneficiary} gets {'read-only' if k.read_only else 'read-write'} access to dataset "
                     f"{k.dataset}" + (" (EXISTS HERE)" if k.dataset in existing else "") for k in index.contracts)
    registered = set(opened.models_to_register)
    languages = {m.namespace: common_pb2.Language.Name(m.language).lower() for m in index.models}
    if registered:
        lines.append("models it registers (code that runs in the backends): "
                     + ", ".join(f"{m.namespace} ({languages[m.namespace]}, owner {m.owner or '?'})"
                                 for m in index.models if m.namespace in registered))
    kept = [m.namespace for m in index.models if m.namespace not in registered]
    if kept:
        lines.append(f"models registered here with the same code (left): {', '.join(kept)}")
    total = sum(index.record_bytes(r) for r in index.chosen.values())
    replicas = sum(len(t.replicas) for t in placement.staging())
    lines.append(f"objects: {len(index.chosen):,} ({total / 1e6:,.1f} MB) onto {backends} backend(s), {replicas:,} "
                 f"replicas, {len(index.aliases):,} aliases")
    lines.append(_needs(list(opened.needs), allowed))
    return lines


def _needs(needs: list, allowed: frozenset) -> str:
    if not needs:
        return "it needs no --allow: it only adds new datasets with their content"
    missing = [n for n in needs if n not in allowed]
    if not missing:
        return f"it needs --allow {','.join(needs)}, which you gave"
    return f"it needs --allow {','.join(needs)}; not given: {','.join(missing)}"


def _roles(account) -> str:
    roles = [r for r, held in (("ADMINISTRATOR", account.admin), ("may register models", account.may_register_models))
             if held]
    return ", ".join(roles) if roles else "plain account"


def _password(account, hashes_sent: bool, new_passwords: dict, passwords) -> str:
    if hashes_sent and account.password_hash:
        return "the snapshot's hash (whoever made the snapshot may know it)"
    if account.username in new_passwords:
        return f"new, written to {passwords}"
    hint = " or --allow password-hashes" if account.password_hash else ""
    return f"none: give --passwords-file FILE{hint}"
