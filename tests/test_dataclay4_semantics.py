"""dataClay 4's semantics, pinned on a real three-backend cluster with programs written the dataClay 4
way (a `Client`, `dataclay.config`, `dataclay.event_loop`), each in its synchronous and its `a_` form:
__getstate__/__setstate__ through make_persistent, move, replica, version and clone; versions of
versions; volatile arguments becoming the caller's persistent objects; make_persistent(backend_id)
moving a persistent object; get_location among fresh replicas; objects model code makes being
persistent at once; the backend clients' flush_all and object versions; AlienDataClayObject and
StubDataClayObject; is_persistent as each generation's programs see it; dataClay 4's error words;
dataclay.contrib models and NewModel's checks; NewDataset."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import started_cluster

pytestmark = pytest.mark.timeout(300)

PRELUDE = textwrap.dedent("""
    import asyncio, json, sys, uuid
    from dataclay import AlienDataClayObject, Client, StubDataClayObject
    from dataclay.event_loop import run_dc_coroutine
    from dataclay.exceptions import (AliasDoesNotExistError, AlreadyExistError, DataClayException,
                                     ObjectIsNotVersionError, ObjectNotRegisteredError)
    from dc4.model import Box, Family, Member, Plain, Reader
    client = Client()
    client.start()
    BACKENDS = sorted(client.get_backends())

    def emit(value):
        print(json.dumps(value))
""")

STYLES = ["sync", "async"]


@pytest.fixture(scope="module")
def cluster():
    shared = started_cluster(backends=3)
    yield shared
    shared.stop()


def run(cluster, body: str, style: str | None = None) -> dict:
    """Runs `body` in a fresh dataClay 4 program; with a style, `body` is an `async def main()` for "async"
    and the same calls without their a_/await for "sync". Returns the JSON of its last output line."""
    code = textwrap.dedent(body)
    if style == "sync":
        code = code.replace("await ", "").replace(".a_", ".").replace("async def main", "def main")
        code += "\nemit(main())\n"
    elif style == "async":
        code += "\nemit(asyncio.run(main()))\n"
    result = cluster.run_client(PRELUDE + code)
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("style", STYLES)
def test_getstate_and_setstate_rebuild_the_object_after_make_persistent_move_replica_version_and_clone(
        cluster, style):
    out = run(cluster, """
        async def main():
            r = Reader("alpha\\nbeta\\ngamma\\ndelta\\nepsilon\\n")
            seen = [r.read_word()]                      # volatile: runs here, with its open stream
            await r.a_make_persistent(backend_id=BACKENDS[0])
            seen.append(r.read_word())                  # the backend rebuilt it with __setstate__
            await r.a_move(BACKENDS[1])
            seen.append(r.read_word())
            await r.a_new_replica(BACKENDS[2])
            r._dc_meta.master_backend_id = BACKENDS[2]  # a read sent to the replica
            seen.append(r.peek())
            v = await r.a_new_version(BACKENDS[0])
            seen.append(v.read_word())
            await v.a_consolidate_version()
            seen.append(r.read_word())
            copy = r.dc_clone()
            seen.append(copy.read_word())               # a volatile copy, rebuilt here with __setstate__
            return {"seen": seen, "position": r.position}
    """, style)
    assert out["seen"] == ["alpha", "beta", "gamma", "delta", "delta", "epsilon", ""]
    assert out["position"] == 5


@pytest.mark.parametrize("style", STYLES)
def test_a_version_of_a_version_and_what_holds_it_stand_for_the_original_once_consolidated(cluster, style):
    out = run(cluster, """
        async def main():
            person = Member("Marc", 24)
            family = Family()
            await family.a_make_persistent(backend_id=BACKENDS[0])
            family.add(person)                          # person becomes persistent, as the caller's object
            v1 = await person.a_new_version(BACKENDS[1])
            v1.name = "Alice"
            held = Family(v1)
            await held.a_make_persistent(backend_id=BACKENDS[2])   # a stored reference to the intermediate version
            v2 = await v1.a_new_version()
            v2.name = "Carol"
            during = [person.name, v1.name, v2.name]
            await v2.a_consolidate_version()
            try:
                await person.a_consolidate_version()
                again = "consolidated"
            except ObjectIsNotVersionError as e:
                again = str(e)
            return {"during": during, "after": [person.name, v1.name, v2.name, family.names(), held.names()],
                    "same_id": [v1.getID() == person.getID(), v2.getID() == person.getID()], "again": again}
    """, style)
    assert out["during"] == ["Marc", "Alice", "Carol"]
    assert out["after"] == ["Carol", "Carol", "Carol", ["Carol"], ["Carol"]]
    assert out["same_id"] == [True, True] and "is not a version!" in out["again"]


@pytest.mark.parametrize("style", STYLES)
def test_volatile_arguments_become_the_callers_objects_and_make_persistent_with_a_backend_moves(cluster, style):
    out = run(cluster, """
        async def main():
            family = Family()
            await family.a_make_persistent(backend_id=BACKENDS[0])
            person = Member("Marc", 24)
            registered_before = person._dc_is_registered
            family.add(person)
            same = person is family.members[0]
            alias = f"moved-{uuid.uuid4()}"
            await person.a_make_persistent(alias=alias, backend_id=BACKENDS[2])
            await person.a_sync()
            return {"before": registered_before, "after": person._dc_is_registered, "same": same,
                    "placed": person._dc_meta.master_backend_id == BACKENDS[0],
                    "moved": person._dc_meta.master_backend_id == BACKENDS[2],
                    "aliases": sorted(await person.a_get_aliases()) == [alias]}
    """, style)
    assert out == {"before": False, "after": True, "same": True, "placed": False, "moved": True, "aliases": True}


@pytest.mark.parametrize("style", STYLES)
def test_copies_moves_aliases_and_errors_behave_and_read_as_in_dataclay_4(cluster, style):
    out = run(cluster, """
        async def main():
            p = Member("Ann", 30)
            await p.a_make_persistent(backend_id=BACKENDS[0])
            await p.a_new_replica(BACKENDS[1])
            await p.a_new_replica(BACKENDS[2])
            locations = sorted({p.get_location() for _ in range(60)})
            replicas = len(p._dc_meta.replica_backend_ids)
            q, r = Member("Bob", 40), Member("Cid", 50)
            q.spouse = r
            await q.a_make_persistent(backend_id=BACKENDS[0])
            await r.a_move(BACKENDS[1])
            await q.a_move(BACKENDS[2], recursive=True, remotes=False)   # r stays where it is
            await q.a_sync(); await r.a_sync()
            where = [q._dc_meta.master_backend_id == BACKENDS[2], r._dc_meta.master_backend_id == BACKENDS[1]]
            await Member.a_delete_alias(f"missing-{uuid.uuid4()}")       # nothing to delete: no error
            errors = {}
            try:
                await Member("x", 1).a_make_persistent(backend_id=uuid.uuid4())
            except KeyError as e:
                errors["unknown_backend"] = [isinstance(e, DataClayException), "is not registered" in str(e)]
            name = f"taken-{uuid.uuid4()}"
            await Member("a", 1).a_make_persistent(name)
            try:
                await Member("b", 2).a_make_persistent(name)
            except AlreadyExistError as e:
                errors["taken"] = str(e)
            try:
                await Member.a_get_by_alias(name + "-none")
            except AliasDoesNotExistError as e:
                errors["missing"] = str(e)
            try:
                await Member("c", 3).a_add_alias("x")
            except ObjectNotRegisteredError as e:
                errors["volatile"] = str(e)
            return {"locations": locations, "replicas": replicas, "where": where, "errors": errors, "name": name,
                    "flag": p.is_persistent is True, "dataset": p._dc_meta.dataset_name, "backends": BACKENDS}
    """, style)
    assert out["locations"] == out["backends"] and out["replicas"] == 2
    assert out["where"] == [True, True] and out["flag"] is True
    errors = out["errors"]
    assert errors["unknown_backend"][0] is True
    assert f"{out['dataset']}/{out['name']} already exists" in errors["taken"]
    assert f"Alias None/{out['name']}-none does not exist" in errors["missing"]
    assert "is not registered!" in errors["volatile"]


def test_objects_model_code_makes_are_persistent_at_once_and_ones_nothing_reaches_are_not_stored(cluster):
    out = run(cluster, """
        family = Family()
        family.make_persistent(backend_id=BACKENDS[1])
        seen = family.made_inside()
        try:
            Member.get_by_id(seen["dropped_id"]).name
            dropped = "stored"
        except DataClayException as e:
            dropped = type(e).__name__
        kept = family.members[0]
        emit({"seen": seen, "dropped": dropped, "kept": [kept.name, kept._dc_meta.master_backend_id == BACKENDS[1]],
              "named": Member.get_by_alias(f"named-{family.getID()}").name, "flag": family.flag_kind(),
              "flush": family.unload_while_running(), "members": family.names()})
    """)
    seen = out["seen"]
    assert seen["is_persistent"] and seen["registered"] and seen["master_is_here"]
    assert seen["aliases"] and out["named"] == "named"
    assert out["dropped"] == "ObjectDoesNotExistError" and out["kept"] == ["kept", True]
    assert out["flag"] == "bool" and out["flush"] == {"self_kept": True, "other_reloaded": True}
    assert out["members"] == ["kept", "late"]


def test_model_code_called_by_a_dataclay_2_program_sees_the_callable_flag(cluster):
    result = cluster.run_client(textwrap.dedent("""
        import json
        from dataclay import api
        api.init()
        from dc4.model import Family
        f = Family()
        f.make_persistent()
        print(json.dumps([f.flag_kind(), f.is_persistent()]))
        api.finish()
    """))
    assert json.loads(result.stdout.strip().splitlines()[-1]) == ["callable", True]


@pytest.mark.parametrize("style", STYLES)
def test_backend_clients_flush_all_and_make_and_consolidate_object_versions(cluster, style):
    out = run(cluster, """
        import storage.api
        async def main():
            backends = await client.a_get_backends()
            first = backends[BACKENDS[0]]
            r = Reader("one\\ntwo\\nthree\\n")
            await r.a_make_persistent(backend_id=BACKENDS[0])
            r.read_word()
            run_dc_coroutine(first.flush_all)             # unloaded: rebuilt with __setstate__ when used
            after_flush = r.read_word()
            m = Member("Marc", 24)
            await m.a_make_persistent(backend_id=BACKENDS[0])
            metadata = run_dc_coroutine(first.new_object_version, m.getID())
            version = storage.api.getByID(metadata)
            version.name = "Alice"
            during = m.name
            run_dc_coroutine(first.consolidate_object_version, version.getID())
            return {"after_flush": after_flush, "during": during, "after": m.name, "name": first.name}
    """, style)
    assert out["after_flush"] == "two" and out["during"] == "Marc" and out["after"] == "Alice"
    assert out["name"].startswith("backend-")


@pytest.mark.parametrize("style", STYLES)
def test_alien_and_stub_objects(cluster, style):
    out = run(cluster, """
        from datetime import datetime
        async def main():
            numbers = AlienDataClayObject([1, 2, 3])
            await numbers.a_make_persistent(backend_id=BACKENDS[1])
            numbers.append(4)
            table = AlienDataClayObject({"a": 1})
            await table.a_make_persistent()
            table["b"] = 2
            del table["a"]
            try:
                table["a"]
                missing = "found"
            except KeyError:
                missing = "KeyError"
            now = datetime(2026, 11, 26, 12, 0)
            when = AlienDataClayObject(now)
            await when.a_make_persistent()
            plain = AlienDataClayObject(Plain(21))
            await plain.a_make_persistent()
            doubled = plain.double()
            plain.y = 5
            again = AlienDataClayObject.get_by_id(numbers.getID())
            PersonStub = StubDataClayObject["dc4.model.Member"]
            stub = PersonStub("Eve", 33)
            stub.add_year()
            stub.spouse = PersonStub("Max", 35)
            alias = f"stub-{uuid.uuid4()}"
            await stub.a_add_alias(alias)
            found = PersonStub.get_by_alias(alias)
            return {"numbers": [len(numbers), list(numbers), 4 in numbers, list(again)],
                    "table": [sorted(table), missing], "when": [when == now, now == when],
                    "plain": [doubled, plain.x, plain.y], "stub": [stub.age, stub.spouse.name, found is stub],
                    "real": Member.get_by_id(stub.getID()).name == "Eve"}
    """, style)
    assert out["numbers"] == [4, [1, 2, 3, 4], True, [1, 2, 3, 4]]
    assert out["table"] == [["b"], "KeyError"] and out["when"] == [True, True]
    assert out["plain"] == [42, 42, 5] and out["stub"] == [34, "Max", True] and out["real"] is True


def test_an_alien_object_of_a_class_no_backend_may_load_is_refused_saying_what_to_do(cluster):
    out = run(cluster, """
        import ipaddress
        try:
            address = AlienDataClayObject(ipaddress.ip_address("10.0.0.1"))
            address.make_persistent()               # stored as given; the backend refuses to load it
            outcome = str(address)
        except DataClayException as e:
            outcome = str(e)
        emit(outcome)
    """)
    assert "ipaddress" in out and "DATACLAY_PICKLE_ALLOW" in out


def test_contrib_models_register_and_work_and_newmodel_refuses_the_client_librarys_packages(cluster, tmp_path):
    # setup: a dataClay 4 style contributed model, and layouts that would shadow the client library
    contrib = tmp_path / "contrib" / "dataclay" / "contrib" / "shapes"
    contrib.mkdir(parents=True)
    (contrib / "__init__.py").write_text("")
    (contrib / "model.py").write_text(textwrap.dedent("""
        from dataclay import DataClayObject, activemethod

        class Square(DataClayObject):
            side: int

            @activemethod
            def __init__(self, side):
                self.side = side

            @activemethod
            def area(self):
                return self.side * self.side

        class Person(DataClayObject):
            name: str
    """))
    # another module's Person is no dataClay class, though a model class has its bare name
    (contrib / "other.py").write_text("from pydantic_like import BaseModel\n\n\nclass Person(BaseModel):\n    pass\n")
    (tmp_path / "contrib" / "pydantic_like.py").write_text("class BaseModel:\n    pass\n")
    shadow = tmp_path / "shadow" / "dataclay"
    shadow.mkdir(parents=True)
    (shadow / "mine.py").write_text("from dataclay import DataClayObject\n\nclass Mine(DataClayObject):\n    x: int\n")
    admin = cluster.admin_user()
    # run
    registered = cluster.dataclaycmd("NewModel", admin, "-", "shapes", str(tmp_path / "contrib"), "python")
    refused = cluster.dataclaycmd("NewModel", admin, "-", "shadow", str(tmp_path / "shadow"), "python", check=False)
    listed = json.loads(cluster.dataclaycmd("ListModels", admin, "-", "--json").stdout)
    env = dict(cluster.env, PYTHONPATH=os.pathsep.join([str(tmp_path / "contrib"), cluster.env["PYTHONPATH"]]))
    used = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import json
        from dataclay import Client
        from dataclay.contrib.shapes.model import Square
        with Client():
            s = Square(7)
            s.make_persistent()
            print(json.dumps(s.area()))
    """)], env=env, capture_output=True, text=True, timeout=120)
    # verify
    assert registered.returncode == 0
    classes = next(m["classes"] for m in listed if m["namespace"] == "shapes")
    assert sorted(classes) == ["dataclay.contrib.shapes.model.Person", "dataclay.contrib.shapes.model.Square"]
    assert refused.returncode != 0 and "client library's own package" in refused.stderr + refused.stdout
    assert used.returncode == 0, used.stderr
    assert json.loads(used.stdout.strip().splitlines()[-1]) == 49


def test_new_dataset_makes_a_dataset_a_client_opens_and_a_missing_one_says_how(cluster):
    admin = cluster.admin_user()
    made = cluster.dataclaycmd("NewDataset", admin, "-", f"{admin}.testdata")
    result = cluster.run_client(textwrap.dedent(f"""
        import json
        from dataclay import Client
        from dataclay.exceptions import DataClayException
        from dc4.model import Member
        with Client(dataset="{admin}.testdata"):
            m = Member("in testdata", 1)
            m.make_persistent()
            dataset = m._dc_meta.dataset_name
        try:
            Client(dataset="testdata").start()
            missing = "opened"
        except DataClayException as e:
            missing = str(e)
        print(json.dumps([dataset, missing]))
    """))
    dataset, missing = json.loads(result.stdout.strip().splitlines()[-1])
    assert f"{admin}.testdata" in made.stdout and dataset == f"{admin}.testdata"
    assert "does not exist" in missing and "NewDataset" in missing
