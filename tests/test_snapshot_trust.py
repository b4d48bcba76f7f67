"""Issue 21's crafted snapshot, against real clusters: a snapshot rewritten by hand (from a real
export, SHA-256s recomputed) that makes its author an administrator, grants its author a contract
on the victim's dataset, plants an object in it, or registers code. An import takes a snapshot only
when a key it trusts signed it, refuses before anything is staged otherwise, and does to the
cluster only what its administrator allowed by name, which the Logic Module enforces also against
a hand-written client. An export writes only into a directory of its own that nobody else can write."""
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import started_cluster
from dataclay.exceptions import PermissionDeniedError
from dataclay._internal.cli.snapshot import snapshot_signing as signing
from dataclay._internal.proto import common_pb2, dataservice_pb2 as ds_pb2, logicmodule_pb2 as lm_pb2
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient, framing
from harness.models import one_field_model, write_model
from harness.snapshots import STRANGER, Crafted, UnsafeTargets, client, facts, lm_stats, logs_in, trust, wait_until

EVE_PW, ALICE_PW, MALLORY_PW = "eves-own-password-1", "alices-password-1", "mallorys-password-1"
BASELINE = "accounts,password-hashes"   # what an honest import of eve's dataset needs: her account, with her hash
EVERYTHING = ",".join(["accounts", "admins", "password-hashes", "existing-accounts", "contracts-on-existing-datasets",
                       "objects-in-existing-datasets", "models"])
GADGET = one_field_model("Gadget", "note", "str", "run", "str", 'open("/etc/hostname").read()')


@dataclass
class World:
    """Eve's cluster (the snapshot's author) and the victim's, with alice's dataset and mallory's account."""

    source: object
    victim: object
    base: Path             # eve's dataset, exported with her password hash, signed by the source's key
    evil_model: object     # a model record of namespace 'evil', as an export carries it
    author_key: object     # the key the snapshot's author signs with (the source cluster's)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trust")
    source = started_cluster(backends=1, store="memory")
    victim = None
    try:
        victim = started_cluster(backends=1, store="memory")
        source.dataclaycmd("NewAccount", "eve", EVE_PW)
        client(source, """Person("eve's", 1).make_persistent(alias="eve-thing"); print("{}")""",
               env={"DATACLAY_USER": "eve", "DATACLAY_PASSWORD": EVE_PW})
        base = tmp / "base"
        exported = source.dataclay("export", str(base), "--dataset", "eve", "--password-hashes")
        assert exported.returncode == 0, exported.stderr
        models = write_model(tmp / "models", "evil", GADGET)
        source.dataclaycmd("NewModel", source.admin_user(), "-", "evil", str(models), "python")
        assert source.dataclay("export", str(tmp / "with-model"), "--dataset", "eve").returncode == 0
        evil = next(m for m in Crafted(tmp / "with-model", tmp / "with-model-copy").records("model")
                    if m.namespace == "evil")
        victim.dataclaycmd("NewAccount", "alice", ALICE_PW)
        victim.dataclaycmd("NewAccount", "mallory", MALLORY_PW)
        client(victim, """Person("treasure", 7).make_persistent(alias="treasure"); print("{}")""",
               env={"DATACLAY_USER": "alice", "DATACLAY_PASSWORD": ALICE_PW})
        yield World(source, victim, base, evil, signing.signing_key(source.home / signing.KEY_FILE))
    finally:
        source.stop()
        if victim is not None:
            victim.stop()


def people(*authors: str) -> dict:
    """Who facts() logs in: the victim's accounts and the snapshot's authors made so far (eve's password)."""
    return {"alice": ALICE_PW, "mallory": MALLORY_PW, **{a: EVE_PW for a in authors}}


def _as_author(world: World, directory: Path, name: str) -> Crafted:
    """Eve's snapshot as an account `name` that the victim's cluster lacks, with fresh object IDs."""
    return Crafted(world.base, directory).rename("eve", name).renew_ids()


def _make_admin(crafted: Crafted) -> Crafted:
    for account in crafted.records("account"):
        account.admin = True
    return crafted


def test_an_unsigned_foreign_or_altered_snapshot_is_refused_before_anything_is_staged(world, tmp_path):
    # setup: the attack of issue 21 (an administrator, a contract on alice's dataset, an object planted
    # in it, a model), unsigned, then signed by its author's key, which the victim does not trust
    victim = world.victim

    def attack(name: str) -> Crafted:
        crafted = _make_admin(_as_author(world, tmp_path / name, "eve-x"))
        crafted.plant("alice", "alice", "planted")
        crafted.add(contract=lm_pb2.DataContract(dataset="alice", owner="alice", beneficiary="mallory"))
        return crafted.add(model=world.evil_model)

    unsigned = attack("unsigned").write()
    foreign = attack("foreign").write(key=world.author_key)
    # and an honest snapshot signed by the victim administrator's own key, changed afterwards
    own_key = signing.signing_key(victim.home / signing.KEY_FILE)
    honest = _as_author(world, tmp_path / "altered", "eve-x")
    honest.write(key=own_key)
    altered = _make_admin(honest).write(keep_signature=True)
    cases = [(unsigned, ["is not signed"]),
             (foreign, [f"signed by key {signing.fingerprint(world.author_key.public_key())}",
                        "which this import does not trust", "pass --trust FILE"]),
             (altered, ["was altered after it was signed"])]
    before, calls = facts(victim, people()), lm_stats(victim)
    for directory, messages in cases:
        # run: even with every allowance
        passwords = tmp_path / f"{directory.name}.passwords"
        result = victim.dataclay("import", str(directory), "--allow", EVERYTHING, "--passwords-file", str(passwords))
        # verify: refused, saying why; nothing created, and the Logic Module never heard of it
        assert result.returncode == 1, (directory.name, result.stdout, result.stderr)
        assert all(m in result.stderr for m in messages), (directory.name, result.stderr)
        assert facts(victim, people()) == before, directory.name
        assert not passwords.exists()
    assert lm_stats(victim).get("BeginImport", 0) == calls.get("BeginImport", 0)
    assert not logs_in(victim, "eve-x", EVE_PW)


def test_a_trusted_snapshot_does_only_what_its_importer_allows(world, tmp_path):
    # setup: the author's key is trusted; each snapshot asks for one thing more than eve's own dataset
    victim = world.victim

    def admin(crafted):
        return _make_admin(crafted)

    def contract(crafted):
        return crafted.add(contract=lm_pb2.DataContract(dataset="alice", owner="alice", beneficiary="mallory"))

    def plant(crafted):
        crafted.plant("alice", "alice", "planted")
        return crafted

    def model(crafted):
        evil = lm_pb2.Model()
        evil.CopyFrom(world.evil_model)
        evil.owner = "eve-m"
        return crafted.add(model=evil)

    def name_mallory(crafted):
        return crafted.add(contract=lm_pb2.DataContract(dataset="eve-e", owner="eve-e", beneficiary="mallory",
                                                        read_only=True))

    cases = [  # author, change, what it needs beyond BASELINE, a phrase of the refusal
        ("eve-a", admin, "admins", "admins (it creates administrator account 'eve-a')"),
        ("eve-c", contract, "contracts-on-existing-datasets,existing-accounts",
         "contracts-on-existing-datasets (it grants 'mallory' read-write access to dataset 'alice'"),
        ("eve-p", plant, "objects-in-existing-datasets,existing-accounts",
         "objects-in-existing-datasets (it adds 1 objects and 1 aliases to dataset 'alice'"),
        ("eve-m", model, "models", "models (it registers model 'evil' (owner 'eve-m'))"),
        ("eve-e", name_mallory, "existing-accounts", "existing-accounts (it names account 'mallory'"),
    ]
    made = []
    for author, change, needs, refusal in cases:
        directory = change(_as_author(world, tmp_path / author, author)).write(key=world.author_key)
        before = facts(victim, people(*made))
        # run: a dry run, then the import with what eve's own dataset needs
        dry = victim.dataclay("import", str(directory), *trust(world.source), "--allow", BASELINE, "--dry-run")
        refused = victim.dataclay("import", str(directory), *trust(world.source), "--allow", BASELINE)
        # verify: the dry run says what it would do; the import is refused naming what it needs; nothing changed
        assert dry.returncode == 0 and "dry run: nothing was imported" in dry.stdout, dry.stderr
        wanted = dry.stdout.split("it needs --allow ")[1].split(";")[0].split(",")
        assert sorted(wanted) == sorted(f"{BASELINE},{needs}".split(",")), dry.stdout
        assert f"not given: {needs}" in dry.stdout or set(needs.split(",")) == set(
            dry.stdout.split("not given: ")[1].split()[0].split(",")), dry.stdout
        assert refused.returncode == 1 and refusal in refused.stderr, (author, refused.stderr)
        assert "If you trust the snapshot with that, import it again with --allow " in refused.stderr
        assert facts(victim, people(*made)) == before, author
        assert not logs_in(victim, author, EVE_PW)
        # run: allowed
        allowed = victim.dataclay("import", str(directory), *trust(world.source), "--allow", f"{BASELINE},{needs}")
        # verify: printed before it was done, and done
        assert allowed.returncode == 0, (author, allowed.stderr, victim.logs())
        assert allowed.stdout.index("accounts it creates:") < allowed.stdout.index("imported "), allowed.stdout
        assert f"signed by key {signing.fingerprint(world.author_key.public_key())}" in allowed.stdout
        made.append(author)
    # verify: each allowed import did exactly what it said, as the accounts themselves see it
    after = facts(victim, people(*made))
    assert after["eve-a"]["admin"] is True and after["eve-c"]["admin"] is False
    assert ("alice", "alice", "mallory", False) in after["mallory"]["contracts"]
    assert ("eve-e", "eve-e", "mallory", True) in after["mallory"]["contracts"]
    assert "evil" in [namespace for namespace, _ in after["models"]]
    planted = client(victim, """print(json.dumps({"name": Person.get_by_alias("planted").name}))""",
                     env={"DATACLAY_USER": "alice", "DATACLAY_PASSWORD": ALICE_PW})
    assert planted["name"] == "eve's"


def _admin(cluster) -> LogicModuleClient:
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    lm.token = lm.new_session(cluster.admin_user(), cluster.admin_password()).token
    return lm


def test_a_hand_written_begin_import_gets_no_more_than_its_allowances(world, tmp_path):
    # setup: an administrator's own client, speaking the protocol without the CLI
    victim = world.victim
    lm = _admin(victim)
    hashed = lm_pb2.SnapshotAccount(username="root3", password_hash="aGFzaA==", password_salt="c2FsdA==",
                                    password_iterations=10_000)
    fresh = str(uuid.uuid4())
    attempts = [  # the parts, what they were allowed, what the refusal names
        ([lm_pb2.ImportPlan(source="by hand", accounts=[lm_pb2.SnapshotAccount(
            username="root2", admin=True, new_password="root2-password-1")],
            allowed=lm_pb2.ImportAllowed(accounts=True))], "admins"),
        ([lm_pb2.ImportPlan(source="by hand", accounts=[hashed], allowed=lm_pb2.ImportAllowed(accounts=True))],
         "password-hashes"),
        ([lm_pb2.ImportPlan(source="by hand", contracts=[lm_pb2.DataContract(
            dataset="alice", owner="alice", beneficiary="mallory")],
            allowed=lm_pb2.ImportAllowed(existing_accounts=True))], "contracts-on-existing-datasets"),
        ([lm_pb2.ImportPlan(source="by hand", allowed=lm_pb2.ImportAllowed(existing_accounts=True)),
          lm_pb2.SnapshotAliases(aliases=[lm_pb2.SnapshotAlias(dataset="alice", alias="x", object_id=fresh)])],
         "objects-in-existing-datasets"),
    ]
    before = facts(victim, people())
    try:
        for parts, needed in attempts:
            messages = [lm_pb2.ImportPlanPart(plan=p) if isinstance(p, lm_pb2.ImportPlan)
                        else lm_pb2.ImportPlanPart(aliases=p) for p in parts]
            # run and verify: refused, naming what was not allowed
            with pytest.raises(PermissionDeniedError, match=f"not allowed: {needed}"):
                lm.begin_import(iter(messages))
        assert facts(victim, people()) == before
        assert not logs_in(victim, "root2", "root2-password-1")

        # run: a plan that names no dataset, then an object staged into alice's dataset all the same
        backend = lm.get_backends()[0]
        plan = lm_pb2.ImportPlan(source="by hand", targets=[lm_pb2.ImportTarget(backend_id=backend.id, objects=1)])
        opened = lm.begin_import(iter([lm_pb2.ImportPlanPart(plan=plan),
                                       lm_pb2.ImportPlanPart(ids=lm_pb2.ImportIds(ids=[fresh]))]))
        assert opened.import_id and list(opened.needs) == []
        template = next(o for objects in Crafted(world.base, tmp_path / "copy").objects.values() for o in objects)
        planted = common_pb2.ObjectData(id=fresh, header=common_pb2.ObjectHeader(
            class_name=template.header.class_name, language=template.header.language, dataset="alice"),
            fields=template.fields)
        record = framing.delimit(ds_pb2.CopiedObject(object=planted).SerializeToString())
        ds = DataServiceClient(f"{backend.host}:{backend.port}", lm.token)
        try:
            staged = ds.import_objects(iter([ds_pb2.ImportChunk(import_id=opened.import_id, data=record)]))
        finally:
            ds.close()
        assert staged.objects == 1
        # verify: the commit refuses it, nothing is registered, and the backend removes what it staged
        with pytest.raises(PermissionDeniedError, match="objects-in-existing-datasets"):
            lm.commit_import(opened.import_id)
        wait_until(lambda: facts(victim, people()) == before, 30,
                   "the staged object to be removed")
        assert lm.get_import_state(opened.import_id) == lm_pb2.IMPORT_UNKNOWN
    finally:
        lm.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_an_export_refuses_a_directory_another_user_owns_or_others_can_write(world, tmp_path):
    # setup: an empty directory of another user's, a group-writable one, a link, and one under a directory anyone writes
    victim = world.victim
    unsafe = UnsafeTargets.make(tmp_path)
    cases = [(unsafe.theirs, unsafe.theirs, "not to you"),
             (unsafe.shared, unsafe.shared, "can be written by group or others (mode 0770)"),
             (unsafe.link, unsafe.link, "is a symbolic link"),
             (unsafe.open_parent / "snap", unsafe.open_parent, "without the sticky bit")]
    calls = lm_stats(victim)
    for target, named, message in cases:
        # run
        result = victim.dataclay("export", str(target))
        # verify: refused, naming the path and what is wrong
        assert result.returncode == 1 and str(named) in result.stderr and message in result.stderr, result.stderr
    # verify: nothing was taken, written or changed
    assert lm_stats(victim).get("BeginSnapshot", 0) == calls.get("BeginSnapshot", 0)
    theirs, shared = unsafe.theirs, unsafe.shared
    assert (theirs.stat().st_uid, theirs.stat().st_mode & 0o777, list(theirs.iterdir())) == (STRANGER, 0o755, [])
    assert (shared.stat().st_mode & 0o777, list(shared.iterdir())) == (0o770, [])
    assert not unsafe.link_target.exists() and not (unsafe.open_parent / "snap").exists()
    # run: a new directory of the caller's
    mine = victim.dataclay("export", str(tmp_path / "mine"))
    # verify: written, private, signed with the cluster's key
    assert mine.returncode == 0, mine.stderr
    assert {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "mine").iterdir()}[signing.SIGNATURE] == 0o600
    assert (victim.home / signing.KEY_FILE).stat().st_mode & 0o777 == 0o600
    assert "signed with key" in mine.stdout and str(victim.home / signing.PUBLIC_FILE) in mine.stdout


def test_another_key_signs_only_what_it_is_given(world, tmp_path):
    # setup: an export signed with a key named on the command line, not the cluster's
    victim = world.victim
    key_file = tmp_path / "keys" / "team.key"
    exported = victim.dataclay("export", str(tmp_path / "snap"), "--dataset", "alice", "--signing-key", str(key_file))
    assert exported.returncode == 0, exported.stderr
    # run: imported back by the same cluster, which trusts only its own key
    by_default = victim.dataclay("import", str(tmp_path / "snap"), "--dry-run")
    with_key = victim.dataclay("import", str(tmp_path / "snap"), "--dry-run", "--signing-key", str(key_file))
    # verify: refused by default, naming the key; accepted when told; the key file is private
    assert by_default.returncode == 1 and "does not trust" in by_default.stderr, by_default.stderr
    team = signing.fingerprint(signing.signing_key(key_file).public_key())
    assert team in by_default.stderr
    # (the dry run stops at the objects already registered here: it got past the signature)
    assert "already registered" in with_key.stderr, with_key.stderr
    assert key_file.stat().st_mode & 0o777 == 0o600 and (tmp_path / "keys" / "team.pub").exists()
