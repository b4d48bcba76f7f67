"""dataclaycmd's listings of what is stored: GetDatasets, GetAliases and GetObjects. Each shows only what
the user may see (its own datasets and those of data contracts in force; an administrator: all), as a
text table, or as one JSON array with --json; --limit N stops after N entries."""
from __future__ import annotations

import datetime
import itertools
import json

from dataclay._internal.runtime import listing

MAX_PAGE = 1000
"""The Logic Module's largest page."""


def _cmd():
    """dataclaycmd, whose session and usage error these commands share (imported late: it lists them)."""
    from dataclay._internal.cli.admin import dataclaycmd
    return dataclaycmd


def get_datasets(config, user: str, password: str, *options: str) -> str:
    """GetDatasets <user> <pass> [--json] [--limit N]"""
    _, opts = _parse("GetDatasets", options, positionals=0, valued=("--limit",))
    limit = _limit(opts)
    with _cmd()._session(config, user, password) as lm:
        found, more = _take(listing.datasets(lambda: lm, True, _page(limit)), limit)
    rows = [{"name": d.name, "owner": d.owner, "access": d.access, "objects": d.objects,
             "contract_expires_at": _when(d.contract_expires_at_ms) or None} for d in found]
    if "--json" in opts:
        return json.dumps(rows, indent=2)
    if not rows:
        return "no datasets"
    contract = ("read-only", "read-write")
    table = _table(("DATASET", "OWNER", "ACCESS", "OBJECTS", "CONTRACT ENDS"),
                   [(r["name"], r["owner"], r["access"], r["objects"],
                     (r["contract_expires_at"] or "never") if r["access"] in contract else "") for r in rows])
    return table + _more(more, limit)


def get_aliases(config, user: str, password: str, *options: str) -> str:
    """GetAliases <user> <pass> [<pattern>] [--dataset D] [--json] [--limit N]"""
    positional, opts = _parse("GetAliases", options, positionals=1, valued=("--dataset", "--limit"))
    pattern = positional[0] if positional else "*"
    limit = _limit(opts)
    with _cmd()._session(config, user, password) as lm:
        found, more = _take(listing.aliases(lambda: lm, pattern, opts.get("--dataset"), _page(limit)), limit)
        names = _backend_names(lm) if found else {}
    rows = [{"alias": a.alias, "dataset": a.dataset, "object_id": a.object_id, "class": a.class_name,
             "language": a.language, "backend_id": a.backend_id, "backend": names.get(a.backend_id, "")}
            for a in found]
    if "--json" in opts:
        return json.dumps(rows, indent=2)
    if not rows:
        return f"no aliases match {pattern!r}" + (f" in dataset {opts['--dataset']}" if "--dataset" in opts else "")
    table = _table(("DATASET", "ALIAS", "CLASS", "OBJECT ID", "BACKEND"),
                   [(r["dataset"], r["alias"], r["class"], r["object_id"], r["backend"] or r["backend_id"])
                    for r in rows])
    return table + _more(more, limit)


def get_objects(config, user: str, password: str, *options: str) -> str:
    """GetObjects <user> <pass> [<class>] [--dataset D] [--json] [--limit N]"""
    positional, opts = _parse("GetObjects", options, positionals=1, valued=("--dataset", "--limit"))
    class_name = positional[0] if positional else None
    limit = _limit(opts)
    with _cmd()._session(config, user, password) as lm:
        found, more = _take(listing.objects(lambda: lm, class_name, opts.get("--dataset"), _page(limit)), limit)
        names = _backend_names(lm) if found else {}
    rows = [{"id": o.id, "class": o.class_name, "language": o.language, "dataset": o.dataset,
             "backend_id": o.master_backend_id, "backend": names.get(o.master_backend_id, ""),
             "replica_backend_ids": list(o.replica_backend_ids), "aliases": list(o.aliases),
             "version_of": o.version_of or None} for o in found]
    if "--json" in opts:
        return json.dumps(rows, indent=2)
    if not rows:
        what = f"objects of class {class_name}" if class_name else "objects"
        return f"no {what}" + (f" in dataset {opts['--dataset']}" if "--dataset" in opts else "")
    table = _table(("DATASET", "CLASS", "OBJECT ID", "BACKEND", "ALIASES"),
                   [(r["dataset"], r["class"], r["id"], r["backend"] or r["backend_id"], ", ".join(r["aliases"]))
                    for r in rows])
    return table + _more(more, limit)


def _parse(command: str, options, positionals: int, valued: tuple) -> tuple[list, dict]:
    """Positional arguments (at most `positionals`) and options: --json, and `valued` ones with a value."""
    found: list = []
    opts: dict = {}
    rest = list(options)
    while rest:
        word = rest.pop(0)
        if word == "--json":
            opts[word] = True
        elif word in valued:
            if not rest:
                raise _cmd().UsageError(f"{command}: {word} needs a value")
            opts[word] = rest.pop(0)
        elif word.startswith("--"):
            known = ", ".join(("--json",) + valued)
            raise _cmd().UsageError(f"unknown {command} option {word!r} (the options are {known})")
        elif len(found) < positionals:
            found.append(word)
        else:
            raise _cmd().UsageError(f"{command}: unexpected argument {word!r}")
    return found, opts


def _limit(opts: dict) -> int | None:
    text = opts.get("--limit")
    if text is None:
        return None
    if not text.isdigit() or int(text) < 1:
        raise _cmd().UsageError(f"--limit must be a positive whole number, not {text!r}")
    return int(text)


def _page(limit: int | None) -> int:
    """The page size to ask for: no more than the limit needs (one more, to know whether more exist)."""
    return MAX_PAGE if limit is None else min(limit + 1, MAX_PAGE)


def _take(entries, limit: int | None) -> tuple[list, bool]:
    """The first `limit` entries (all when None) and whether more exist."""
    if limit is None:
        return list(entries), False
    found = list(itertools.islice(entries, limit + 1))
    return found[:limit], len(found) > limit


def _more(more: bool, limit: int | None) -> str:
    return f"\n(the first {limit} shown; raise --limit to see more)" if more else ""


def _backend_names(lm) -> dict:
    return {b.id: b.name for b in lm.get_backends()}


def _when(ms: int) -> str:
    """ISO 8601 in UTC; "" for 0 (never)."""
    if not ms:
        return ""
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).isoformat(timespec="seconds")


def _table(headers: tuple, rows: list) -> str:
    """Left-aligned columns under their headers (None shows as "-")."""
    cells = [list(headers)] + [["-" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells)
