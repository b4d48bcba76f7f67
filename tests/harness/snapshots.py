"""Helpers of the export/import tests: what a cluster holds (to show a failed import changed
nothing), client programs run against a cluster, writers that keep invariants across objects on
different backends while a snapshot is taken, and snapshots rewritten by hand as an attacker would."""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import uuid
from dataclasses import dataclass

from dataclay.exceptions import DataClayException
from dataclay._internal.cli.snapshot import snapshot_format as fmt, snapshot_signing as signing
from dataclay._internal.config import Config
from dataclay._internal.proto import common_pb2, logicmodule_pb2 as lm_pb2, snapshot_pb2
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient, framing
from harness.waiting import wait_until

STRANGER = 65534  # nobody: the other user whose files an export or import must not trust

PRELUDE = textwrap.dedent("""
    import json, sys
    from dataclay import api
    api.init()
    from people.model import Person, Account, Counter
    from payloads.model import Blob
""")

# Each writer owns a pair of counters on two backends and increments a, then b, one call each: at
# every moment 0 <= a - b <= 1. Another moves 1 between two accounts on two backends, withdraw then
# deposit: at every moment the total is 2000 or 1999. A snapshot that is not one cut across the
# backends (one read earlier than the other) breaks these as soon as writers run between the reads.
PAIR_WRITER = PRELUDE + textwrap.dedent("""
    import pathlib
    a, b, stop = api.get_by_id(sys.argv[1]), api.get_by_id(sys.argv[2]), pathlib.Path(sys.argv[3])
    n = 0
    while not stop.exists():
        a.increment()
        b.increment()
        n += 1
    print(json.dumps({"a": a.get(), "b": b.get(), "rounds": n}))
""")

TRANSFER_WRITER = PRELUDE + textwrap.dedent("""
    import pathlib
    x, y, stop = api.get_by_id(sys.argv[1]), api.get_by_id(sys.argv[2]), pathlib.Path(sys.argv[3])
    n = 0
    while not stop.exists():
        source, target = (x, y) if n % 2 == 0 else (y, x)
        source.withdraw(1)
        target.deposit(1)
        n += 1
    print(json.dumps({"total": x.balance + y.balance, "rounds": n}))
""")


def client(cluster, body: str, *args: str, env: dict | None = None, check: bool = True):
    """Runs `body` after PRELUDE in a fresh client process; the JSON of its last line (or the result when not `check`)."""
    command = [sys.executable, "-c", PRELUDE + textwrap.dedent(body), *args]
    result = subprocess.run(command, env={**cluster.env, **(env or {})}, capture_output=True, text=True, timeout=180)
    if not check:
        return result
    assert result.returncode == 0, f"client failed:\n{result.stdout}\n{result.stderr}\n{cluster.logs()}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def holdings(cluster) -> dict:
    """What a failed import must leave as it was: registered objects and aliases, models, accounts'
    datasets, and how many objects each live backend stores."""
    config = Config.load(env=cluster.env)
    lm = LogicModuleClient(config.lm_address, tls=config.tls)
    try:
        lm.token = lm.new_session(config.user, config.password).token
        stats = lm.get_stats()
        out = {"objects": stats.objects, "aliases": stats.aliases,
               "models": sorted((m.namespace, m.version) for m in lm.list_models()), "stored": {}}
        for b in lm.get_backends():
            if b.alive:
                ds = DataServiceClient(f"{b.host}:{b.port}", lm.token, tls=config.tls)
                try:
                    out["stored"][b.name] = ds.get_status().store.objects
                finally:
                    ds.close()
        lm.close_session()
        return out
    finally:
        lm.close()


class StoreCounter:
    """Asks one backend, over and over, how many objects it stores (an administrator's open session)."""

    def __init__(self, cluster, backend_name: str):
        config = Config.load(env=cluster.env)
        self._lm = LogicModuleClient(config.lm_address, tls=config.tls)
        self._lm.token = self._lm.new_session(config.user, config.password).token
        b = next(b for b in self._lm.get_backends() if b.name == backend_name)
        self._ds = DataServiceClient(f"{b.host}:{b.port}", self._lm.token, tls=config.tls)

    def objects(self) -> int:
        return self._ds.get_status().store.objects

    def close(self) -> None:
        self._ds.close()
        self._lm.close()


def wait_for_backends(cluster, count: int, timeout: float = 60) -> None:
    """Waits until `count` backends are alive."""
    wait_until(lambda: len(holdings(cluster)["stored"]) >= count, timeout, f"{count} live backends")


def manifest(directory: pathlib.Path) -> dict:
    return json.loads((directory / "manifest.json").read_text())


def trust(cluster) -> list:
    """The options with which another cluster's import trusts `cluster`'s exports (its signing key)."""
    return ["--trust", str(cluster.home / signing.PUBLIC_FILE)]


def lm_stats(cluster) -> dict:
    """How many times the Logic Module served each RPC."""
    config = Config.load(env=cluster.env)
    lm = LogicModuleClient(config.lm_address, tls=config.tls)
    try:
        lm.token = lm.new_session(config.user, config.password).token
        calls = dict(lm.get_stats().calls)
        lm.close_session()
        return calls
    finally:
        lm.close()


def facts(cluster, people: dict) -> dict:
    """holdings() and, for each of `people` (user -> password; accounts that exist: the Logic Module
    throttles failed log-ins), whether they log in as administrators, and the contracts on their
    datasets and to them."""
    out = holdings(cluster)
    config = Config.load(env=cluster.env)
    for user, password in sorted(people.items()):
        lm = LogicModuleClient(config.lm_address, tls=config.tls)
        try:
            session = lm.new_session(user, password)
            lm.token = session.token
            contracts = sorted((k.dataset, k.owner, k.beneficiary, k.read_only) for k in lm.list_data_contracts())
            out[user] = {"admin": session.admin, "contracts": contracts}
            lm.close_session()
        finally:
            lm.close()
    return out


def logs_in(cluster, user: str, password: str) -> bool:
    """Whether `user` logs in with `password` (a failure counts against the Logic Module's throttle)."""
    config = Config.load(env=cluster.env)
    lm = LogicModuleClient(config.lm_address, tls=config.tls)
    try:
        lm.new_session(user, password)
        return True
    except DataClayException:
        return False
    finally:
        lm.close()


class Crafted:
    """A copy of a real snapshot rewritten by hand, as the attacker of issue 21 did: records decoded
    with protobuf, changed, written back, and the manifest's sizes, SHA-256s and record counts
    recomputed. write() signs it with a key, or leaves it unsigned, or keeps the old signature."""

    def __init__(self, original: pathlib.Path, directory: pathlib.Path):
        shutil.copytree(original, directory)
        self.directory = directory
        self.manifest = json.loads((directory / fmt.MANIFEST).read_text())
        self.metadata = [snapshot_pb2.MetadataRecord.FromString(r) for r in self._records(fmt.METADATA_FILE)]
        self.objects = {f["name"]: [common_pb2.ObjectData.FromString(r) for r in self._records(f["name"])]
                        for f in self.manifest["files"] if f["name"] != fmt.METADATA_FILE}

    def _records(self, name: str) -> list:
        data = (self.directory / name).read_bytes()
        return [data[a:b] for a, b in fmt.delimited(data, name)]

    def records(self, kind: str) -> list:
        return [getattr(r, kind) for r in self.metadata if r.WhichOneof("record") == kind]

    def add(self, **record) -> "Crafted":
        """Appends a metadata record (model=, account=, dataset=, contract=, objects=, aliases=)."""
        self.metadata.append(snapshot_pb2.MetadataRecord(**record))
        return self

    def rename(self, old: str, new: str) -> "Crafted":
        """Renames an account and the dataset of its name everywhere."""
        for a in self.records("account"):
            a.username = new if a.username == old else a.username
        for d in self.records("dataset"):
            d.name, d.owner = (new if d.name == old else d.name), (new if d.owner == old else d.owner)
        for k in self.records("contract"):
            for field in ("dataset", "owner", "beneficiary"):
                if getattr(k, field) == old:
                    setattr(k, field, new)
        for batch in self.records("aliases"):
            for a in batch.aliases:
                a.dataset = new if a.dataset == old else a.dataset
        for objects in self.objects.values():
            for o in objects:
                o.header.dataset = new if o.header.dataset == old else o.header.dataset
        return self

    def renew_ids(self) -> "Crafted":
        """New IDs for every object (the same snapshot can then be imported again)."""
        new = {o.id: str(uuid.uuid4()) for objects in self.objects.values() for o in objects}
        for objects in self.objects.values():
            for o in objects:
                o.id = new[o.id]
                for f in o.fields:
                    f.references[:] = [new.get(r, r) for r in f.references]
        for batch in self.records("objects"):
            for o in batch.objects:
                o.id = new.get(o.id, o.id)
        for batch in self.records("aliases"):
            for a in batch.aliases:
                a.object_id = new.get(a.object_id, a.object_id)
        return self

    def plant(self, dataset: str, owner: str, alias: str) -> str:
        """A copy of the first object, with a new ID, in `dataset` (described as `owner`'s), under
        `alias`; its ID."""
        name, objects = next((n, o) for n, o in self.objects.items() if o)
        planted = common_pb2.ObjectData()
        planted.CopyFrom(objects[0])
        planted.id = str(uuid.uuid4())
        planted.header.dataset = dataset
        objects.append(planted)
        if dataset not in {d.name for d in self.records("dataset")}:
            self.add(dataset=lm_pb2.SnapshotDataset(name=dataset, owner=owner))
        self.add(aliases=lm_pb2.SnapshotAliases(aliases=[
            lm_pb2.SnapshotAlias(dataset=dataset, alias=alias, object_id=planted.id)]))
        return planted.id

    def write(self, key=None, keep_signature: bool = False) -> pathlib.Path:
        """Writes every file back and the manifest with the checksums recomputed; signs it with `key`,
        or keeps the signature of the original (`keep_signature`), or leaves it unsigned."""
        contents = {fmt.METADATA_FILE: [r.SerializeToString() for r in self.metadata]}
        contents.update({name: [o.SerializeToString() for o in objects] for name, objects in self.objects.items()})
        for entry in self.manifest["files"]:
            data = b"".join(framing.delimit(r) for r in contents[entry["name"]])
            (self.directory / entry["name"]).write_bytes(data)
            entry.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest(), records=len(contents[entry["name"]]))
        raw = (json.dumps(self.manifest, indent=2) + "\n").encode()
        (self.directory / fmt.MANIFEST).write_bytes(raw)
        if key is not None:
            signing.sign(self.directory, raw, key)
        elif not keep_signature:
            (self.directory / signing.SIGNATURE).unlink(missing_ok=True)
        return self.directory


@dataclass(frozen=True)
class UnsafeTargets:
    """Places an export must refuse to write a snapshot to, made by `make` (as root: it gives a directory
    away): `theirs`, an empty directory of STRANGER's (mode 0755); `shared`, an empty group-writable one
    (0770); `link`, a symbolic link to `link_target`, which does not exist; `open_parent`, a directory
    anyone writes (0777, no sticky bit), under which a new directory could be replaced."""
    theirs: pathlib.Path
    shared: pathlib.Path
    link: pathlib.Path
    link_target: pathlib.Path
    open_parent: pathlib.Path

    @classmethod
    def make(cls, root: pathlib.Path) -> UnsafeTargets:
        """The places, made under `root`."""
        made = cls(root / "theirs", root / "shared", root / "link", root / "elsewhere", root / "open")
        for d in (made.theirs, made.shared, made.open_parent):
            d.mkdir()
        os.chown(made.theirs, STRANGER, STRANGER)
        made.theirs.chmod(0o755)
        made.shared.chmod(0o770)
        made.open_parent.chmod(0o777)
        made.link.symlink_to(made.link_target)
        return made
