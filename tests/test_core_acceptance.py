"""Acceptance of the core service on a real cluster: the scenarios of DESIGN.md's Python API
across separate client processes, aliases, remote methods and errors."""
import json
import textwrap

import pytest

from conftest import started_cluster, engine_options, engines

PRELUDE = textwrap.dedent("""
    import json, sys
    from dataclay import api
    api.init()
    from people.model import Person, Account, Node, Counter
""")


@pytest.fixture(scope="module", params=engines())
def cluster(request):
    """The acceptance suite runs once per store engine, on a two-backend cluster of that engine."""
    shared = started_cluster(**engine_options(request, request.param))
    yield shared
    shared.stop()


def client(cluster, body: str, *args: str) -> dict:
    """Runs `body` in a fresh client process; it must print one JSON line, which is returned."""
    result = cluster.run_client(PRELUDE + textwrap.dedent(body), *args)
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_object_persisted_by_one_client_is_used_by_alias_from_another(cluster):
    # setup
    made = client(cluster, """
        p = Person("alice", 30)
        p.make_persistent(alias="alice")
        print(json.dumps({"id": p.getID(), "location": p.get_location(), "persistent": bool(p.is_persistent)}))
    """)
    # run
    seen = client(cluster, """
        p = Person.get_by_alias("alice")
        before = p.age
        after = p.birthday()
        p.name = "Alice"
        print(json.dumps({"id": str(p.get_id()), "name": p.name, "before": before, "after": after,
                          "locations": p.get_all_locations(), "location": p.get_location(),
                          "greeting": p.greeting(), "persistent": p.is_persistent(),
                          "backends": sorted(api.get_backends())}))
    """)
    again = client(cluster, """
        p = Person.get_by_alias("alice")
        print(json.dumps({"name": p.name, "age": p.age}))
    """)
    # verify
    assert made["persistent"] is True
    assert seen["id"] == made["id"]
    assert (seen["before"], seen["after"]) == (30, 31)
    assert seen["location"] == made["location"] and seen["location"] in seen["backends"]
    assert list(seen["locations"]) == [made["location"]]
    assert seen["greeting"] == "hello, Alice"
    assert again == {"name": "Alice", "age": 31}


def test_object_is_stored_on_the_backend_asked_for(cluster):
    out = client(cluster, """
        backends = sorted(api.get_backends())
        placed = []
        for b in backends:
            c = Counter(1)
            c.make_persistent(backend_id=b)
            placed.append([b, c.get_location(), c.increment(2)])
        print(json.dumps(placed))
    """)
    assert len(out) == 2
    for wanted, actual, value in out:
        assert wanted == actual and value == 3


def test_graph_with_cycle_and_shared_object_is_persisted_once(cluster):
    # setup: a -> b -> c -> a, and two people sharing one friend
    made = client(cluster, """
        a = Node(1); b = Node(2, a); c = Node(3, b); a.next = c
        shared = Person("carol", 40)
        x = Person("x", 1); y = Person("y", 2)
        x.friends.append(shared); y.friends.append(shared); x.friends.append(y)
        a.make_persistent(alias="ring")
        x.make_persistent(alias="x")
        ids = {"a": a.getID(), "b": b.getID(), "c": c.getID(), "shared": shared.getID(), "y": y.getID()}
        print(json.dumps({"ids": ids, "all_persistent": all(o.is_persistent for o in (a, b, c, shared, x, y))}))
    """)
    # run
    seen = client(cluster, """
        a = Node.get_by_alias("ring")
        x = Person.get_by_alias("x")
        y = x.friends[1]
        print(json.dumps({"walk": a.walk(7), "c": a.next.getID(), "b": a.next.next.getID(),
                          "back": a.next.next.next.getID(), "shared_from_x": x.friends[0].getID(),
                          "shared_from_y": y.friends[0].getID(), "names": x.friend_names()}))
    """)
    # verify
    assert made["all_persistent"]
    assert seen["walk"] == [1, 3, 2, 1, 3, 2, 1]
    assert (seen["c"], seen["b"], seen["back"]) == (made["ids"]["c"], made["ids"]["b"], made["ids"]["a"])
    assert seen["shared_from_x"] == seen["shared_from_y"] == made["ids"]["shared"]
    assert seen["names"] == ["carol", "y"]


def test_duplicate_alias_is_refused_and_the_first_object_kept(cluster):
    out = client(cluster, """
        from dataclay.exceptions import AliasAlreadyExistsError
        first = Counter(1); first.make_persistent(alias="dup")
        second = Counter(2)
        try:
            second.make_persistent(alias="dup")
            outcome = "accepted"
        except AliasAlreadyExistsError as e:
            outcome = "refused: " + str(e)
        print(json.dumps({"outcome": outcome, "value": Counter.get_by_alias("dup").get(),
                          "second_persistent": bool(second.is_persistent)}))
    """)
    assert out["outcome"].startswith("refused") and "dup" in out["outcome"]
    assert out["value"] == 1
    assert out["second_persistent"] is False


def test_missing_and_deleted_aliases_raise_alias_does_not_exist(cluster):
    out = client(cluster, """
        from dataclay.exceptions import AliasDoesNotExistError
        results = {}
        try:
            Person.get_by_alias("nobody")
        except AliasDoesNotExistError as e:
            results["missing"] = str(e)
        p = Person("bob", 5); p.make_persistent(alias="bob")
        Person.delete_alias("bob")
        try:
            Person.get_by_alias("bob")
        except AliasDoesNotExistError as e:
            results["deleted"] = str(e)
        results["still_usable_by_reference"] = p.birthday()
        print(json.dumps(results))
    """)
    assert "nobody" in out["missing"]
    assert "bob" in out["deleted"]
    assert out["still_usable_by_reference"] == 6


def test_remote_exception_reaches_the_caller_with_its_type_and_message(cluster):
    out = client(cluster, """
        from people.model import InsufficientFunds
        p = Person("eve", 20); p.make_persistent()
        a = Account("eve", 10); a.make_persistent()
        results = {}
        try:
            p.fail("boom")
        except ValueError as e:
            results["builtin"] = [type(e).__name__, str(e)]
        try:
            a.withdraw(50)
        except InsufficientFunds as e:
            results["model"] = [type(e).__name__, str(e)]
        results["after"] = [p.birthday(), a.deposit(5)]
        print(json.dumps(results))
    """)
    assert out["builtin"] == ["ValueError", "boom"]
    assert out["model"] == ["InsufficientFunds", "balance 10 < 50"]
    assert out["after"] == [21, 15]


def test_get_by_id_from_another_process_returns_the_same_object(cluster):
    made = client(cluster, """
        c = Counter(41); c.make_persistent()
        print(json.dumps({"id": c.getID()}))
    """)
    seen = client(cluster, """
        c = api.get_by_id(sys.argv[1])
        print(json.dumps({"class": type(c).__name__, "value": c.increment(), "id": c.getID()}))
    """, made["id"])
    assert seen == {"class": "Counter", "value": 42, "id": made["id"]}


def test_unknown_object_id_gets_a_clear_error_and_the_service_keeps_serving(cluster):
    out = client(cluster, """
        import uuid
        from dataclay.exceptions import ObjectDoesNotExistError
        missing = str(uuid.uuid4())
        try:
            api.get_by_id(missing)
            outcome = "found"
        except ObjectDoesNotExistError as e:
            outcome = str(e)
        c = Counter(1); c.make_persistent()
        print(json.dumps({"outcome": outcome, "missing": missing, "works": c.increment()}))
    """)
    assert out["missing"] in out["outcome"]
    assert out["works"] == 2


def test_recursive_false_with_a_volatile_reference_is_a_clear_error(cluster):
    out = client(cluster, """
        from dataclay.exceptions import DataClayException
        a = Node(1, Node(2))
        try:
            a.make_persistent(recursive=False)
            outcome = "accepted"
        except DataClayException as e:
            outcome = type(e).__name__ + ": " + str(e)
        print(json.dumps({"outcome": outcome, "persistent": bool(a.is_persistent)}))
    """)
    assert out["outcome"].startswith("InvalidArgumentError")
    assert out["persistent"] is False


def test_persistent_only_calls_on_a_volatile_object_raise_object_not_persistent(cluster):
    out = client(cluster, """
        from dataclay.exceptions import ObjectNotPersistentError
        c = Counter(3)
        try:
            c.get_location()
            outcome = "answered"
        except ObjectNotPersistentError as e:
            outcome = "refused"
        print(json.dumps({"outcome": outcome, "local": c.increment(), "persistent": bool(c.is_persistent)}))
    """)
    assert out == {"outcome": "refused", "local": 4, "persistent": False}


@pytest.mark.parametrize("metadata", ["embedded", "postgres"])
def test_aliases_stay_unique_under_concurrent_make_persistent_from_many_clients(make_cluster, postgres, metadata):
    # setup
    url = postgres.create_database("race") if metadata == "postgres" else None
    cluster = make_cluster(metadata_url=url)
    body = PRELUDE + textwrap.dedent("""
        from dataclay.exceptions import AliasAlreadyExistsError
        won = []
        for i in range(20):
            c = Counter(int(sys.argv[1]))
            try:
                c.make_persistent(alias=f"race-{i}")
                won.append(i)
            except AliasAlreadyExistsError:
                pass
        print(json.dumps(won))
    """)
    # run: 6 clients race for the same 20 aliases
    procs = [cluster.popen_client(body, str(n)) for n in range(6)]
    outputs = [p.communicate(timeout=180) for p in procs]
    # verify: every alias won exactly once, and it points at the winner's object
    wins = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    assert sorted(i for w in wins for i in w) == list(range(20))
    owners = client(cluster, """
        print(json.dumps([Counter.get_by_alias(f"race-{i}").get() for i in range(20)]))
    """)
    for client_number, won in enumerate(wins):
        for i in won:
            assert owners[i] == client_number


def test_status_shows_each_backends_engine_durability_and_objects(cluster):
    # setup: an object on every backend of this engine's cluster
    client(cluster, """
        for b in sorted(api.get_backends()):
            Counter(0).make_persistent(backend_id=b)
        print(json.dumps({}))
    """)
    # run
    text = cluster.status()
    # verify
    stores = [line.strip() for line in text.splitlines() if line.strip().startswith("store ")]
    assert len(stores) == 2, text
    for line in stores:
        assert line.startswith(f"store {cluster.store}: "), text
        assert int(line.split(": ")[1].split()[0]) >= 1, text
    assert text.count("durability: ") == 2, text
    if cluster.store == "2lm":
        assert "checkpoint" in text, text
