"""Versions and moves on a real two-backend cluster: a version changes apart from its original
until consolidated (a field it deleted is deleted from the original too), and then stands for the
original (as in dataClay 4), versions of versions, many versions consolidated in turn, a named version outlives its program and collections (an
unnamed one does not), consolidating a non-version is a clear error; moves recursive and not keep
aliases and references working, and moving to an unknown backend is a clear error; dataClay 4's
move(..., remotes=False) moves only what the object's backend masters (on three backends)."""
import json
import textwrap

import pytest

from test_core_acceptance import PRELUDE

pytestmark = pytest.mark.timeout(300)

HELPERS = textwrap.dedent("""
    from dataclay.exceptions import BackendDoesNotExistError, NotAVersionError, ObjectDoesNotExistError
    BACKENDS = sorted(api.get_backends())
""")


def run(cluster, body: str, *args: str) -> dict:
    """Runs `body` in a fresh client process; returns the JSON of its last output line."""
    result = cluster.run_client(PRELUDE + HELPERS + textwrap.dedent(body), *args)
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_version_changes_leave_the_original_untouched_until_consolidated(cluster):
    # setup
    out = run(cluster, """
        p = Person("olga", 30)
        p.make_persistent(alias="olga", backend_id=BACKENDS[0])
        # run
        v = p.new_version()
        v.birthday()
        v.name = "Olga"
        during = {"original": [p.name, p.age], "version": [v.name, v.age], "version_location": v.get_location(),
                  "distinct": v.getID() != p.getID(), "same_class": type(v) is Person}
        v.consolidate_version()
        print(json.dumps({"during": during, "after": [p.name, p.age], "version": [v.name, v.getID() == p.getID()],
                          "master": BACKENDS[0]}))
    """)
    seen = run(cluster, """
        p = Person.get_by_alias("olga")
        print(json.dumps([p.name, p.age, p.get_all_locations()]))
    """)
    # verify
    during = out["during"]
    assert during["original"] == ["olga", 30] and during["version"] == ["Olga", 31]
    assert during["distinct"] and during["same_class"] and during["version_location"] == out["master"]
    assert out["after"] == ["Olga", 31] and out["version"] == ["Olga", True]
    assert seen == ["Olga", 31, [out["master"]]]


def test_version_on_another_backend_consolidates_into_the_original(cluster):
    out = run(cluster, """
        c = Counter(5)
        c.make_persistent(backend_id=BACKENDS[0])
        v = c.new_version(backend_id=BACKENDS[1])
        v.increment(10)
        during = [c.get(), v.get(), v.get_location()]
        v.consolidate_version()
        print(json.dumps({"during": during, "after": c.get(), "location": c.get_location(), "backends": BACKENDS}))
    """)
    assert out["during"] == [5, 15, out["backends"][1]]
    assert out["after"] == 15 and out["location"] == out["backends"][0]


def test_a_field_deleted_in_a_version_is_deleted_from_the_original_wherever_each_is(cluster):
    out = run(cluster, """
        def friends_after(original, version_backend):
            original.make_persistent(backend_id=BACKENDS[0])
            v = original.new_version(backend_id=version_backend)
            v.forget_friends()
            v.birthday()
            v.consolidate_version()
            try:
                return original.friend_names()
            except AttributeError:
                return "AttributeError"
        there, here = Person("rui", 40), Person("ana", 50)
        print(json.dumps({"other_backend": friends_after(there, BACKENDS[1]), "same_backend": friends_after(here, BACKENDS[0]),
                          "ages": [there.age, here.age]}))
    """)
    assert out == {"other_backend": "AttributeError", "same_backend": "AttributeError", "ages": [41, 51]}


def test_version_of_a_version_consolidates_into_the_original(cluster):
    out = run(cluster, """
        p = Person("ivan", 50)
        p.make_persistent(backend_id=BACKENDS[1])
        v1 = p.new_version()
        v1.name = "first"
        v2 = v1.new_version(backend_id=BACKENDS[0])
        v2.birthday()
        during = [p.name, p.age, v1.name, v1.age, v2.name, v2.age]
        v2.consolidate_version()
        after_v2 = [p.name, p.age, v1.name, v1.age, v2.name, v2.age]
        try:
            v1.consolidate_version()
            again = "consolidated"
        except NotAVersionError as e:
            again = str(e)
        print(json.dumps({"during": during, "after_v2": after_v2, "again": again,
                          "ids": [v1.getID() == p.getID(), v2.getID() == p.getID()]}))
    """)
    # as in dataClay 4: the version consolidated and the one it was made from both stand for the original now
    assert out["during"] == ["ivan", 50, "first", 50, "first", 51]
    assert out["after_v2"] == ["first", 51] * 3 and out["ids"] == [True, True]
    assert "is not a version!" in out["again"]


def test_many_versions_of_one_object_are_consolidated_in_turn(cluster):
    out = run(cluster, """
        c = Counter(0)
        c.make_persistent(alias="many", backend_id=BACKENDS[0])
        versions = [c.new_version(backend_id=BACKENDS[i % 2]) for i in range(6)]
        ids = len({v.getID() for v in versions})
        for i, v in enumerate(versions):
            v.increment(10 * (i + 1))
        untouched = c.get()
        seen = []
        for v in versions:
            v.consolidate_version()
            seen.append(Counter.get_by_alias("many").get())
        print(json.dumps({"untouched": untouched, "seen": seen, "ids": ids,
                          "after": sorted({v.get() for v in versions})}))
    """)
    assert out["untouched"] == 0 and out["ids"] == 6
    assert out["seen"] == [10, 20, 30, 40, 50, 60]
    assert out["after"] == [60]  # each consolidated version stands for the original


def test_a_version_given_an_alias_outlives_its_program_and_collections_and_consolidates_elsewhere(cluster):
    # setup: one program makes a version and names it, another makes one and leaves it to the collector
    made = run(cluster, """
        c = Counter(1)
        c.make_persistent(alias="handed", backend_id=BACKENDS[0])
        v = c.new_version(backend_id=BACKENDS[1])
        v.increment(41)
        v.add_alias("handed-version")
        lost = c.new_version()
        lost.get_all_locations()  # registered now (the Logic Module looks a missing object up everywhere)
        print(json.dumps({"version": v.getID(), "lost": lost.getID()}))
    """)
    # run: a collection between the programs, then another program consolidates the named version
    cluster.dataclaycmd("CollectGarbage", cluster.admin_user(), "-")
    out = run(cluster, """
        v = Counter.get_by_alias("handed-version")
        try:
            lost = api.get_by_id(sys.argv[1]).get()
        except ObjectDoesNotExistError as e:
            lost = type(e).__name__
        version_id = v.getID()
        v.consolidate_version()
        original = Counter.get_by_alias("handed")
        print(json.dumps({"version": version_id, "after": original.get(), "lost": lost,
                          "now": [v.getID() == original.getID(), v.get()]}))
    """, made["lost"])
    # verify: a version is an ordinary object, kept by its alias and collected when nothing reaches it;
    # consolidated, it stands for the original (as in dataClay 4)
    assert out["version"] == made["version"] and out["after"] == 42 and out["now"] == [True, 42]
    assert out["lost"] == "ObjectDoesNotExistError"


def test_consolidating_an_object_that_is_not_a_version_is_a_clear_error(cluster):
    out = run(cluster, """
        c = Counter(3)
        c.make_persistent(backend_id=BACKENDS[0])
        try:
            c.consolidate_version()
            outcome = "accepted"
        except NotAVersionError as e:
            outcome = str(e)
        print(json.dumps({"outcome": outcome, "id": c.getID(), "value": c.get(), "locations": c.get_all_locations()}))
    """)
    assert out["outcome"] != "accepted" and "version" in out["outcome"], out["outcome"]
    assert out["value"] == 3 and len(out["locations"]) == 1


def test_move_without_recursion_relocates_only_the_object_and_keeps_alias_and_references(cluster):
    # setup: a -> b -> a on the first backend
    made = run(cluster, """
        a = Node(1); b = Node(2, a); a.next = b
        a.make_persistent(alias="mover", backend_id=BACKENDS[0])
        # run
        a.move(BACKENDS[1])
        print(json.dumps({"a": [a.get_location(), a.get_all_locations()], "b": b.get_all_locations(),
                          "walk": a.walk(4), "backends": BACKENDS, "b_id": b.getID()}))
    """)
    seen = run(cluster, """
        a = Node.get_by_alias("mover")
        print(json.dumps({"walk": a.walk(5), "location": a.get_location(), "b": a.next.get_location(),
                          "b_id": a.next.getID(), "back": a.next.next.get_location()}))
    """)
    # verify
    first, second = made["backends"]
    assert made["a"] == [second, [second]] and made["b"] == [first] and made["walk"] == [1, 2, 1, 2]
    assert seen == {"walk": [1, 2, 1, 2, 1], "location": second, "b": first, "b_id": made["b_id"], "back": second}


def test_recursive_move_relocates_everything_reached_and_keeps_alias_and_references(cluster):
    made = run(cluster, """
        shared = Person("sam", 9)
        p = Person("pia", 10); q = Person("quin", 11)
        p.friends.extend([q, shared]); q.friends.append(shared)
        p.make_persistent(alias="movers", backend_id=BACKENDS[1])
        p.move(BACKENDS[0], recursive=True)
        q.birthday()
        print(json.dumps({"locations": [o.get_all_locations() for o in (p, q, shared)], "backends": BACKENDS}))
    """)
    seen = run(cluster, """
        p = Person.get_by_alias("movers")
        q = p.friends[0]
        print(json.dumps({"names": p.friend_names(), "q_age": q.age, "shared_same": p.friends[1].getID() ==
                          q.friends[0].getID(), "locations": [o.get_location() for o in (p, q, q.friends[0])]}))
    """)
    target = made["backends"][0]
    assert made["locations"] == [[target]] * 3
    assert seen == {"names": ["quin", "sam"], "q_age": 12, "shared_same": True, "locations": [target] * 3}


def test_recursive_move_without_remotes_moves_only_what_the_backend_masters_both_styles(make_cluster):
    cluster = make_cluster(backends=3)
    # setup: p -> q on the second backend, p -> r on the third; dataClay 4's remotes=False, then the
    # same awaited; and a volatile object moved
    made = run(cluster, """
        import asyncio
        p = Person("pia", 10); q = Person("quin", 11); r = Person("rex", 12)
        p.friends.extend([q, r])
        r.make_persistent(backend_id=BACKENDS[2])
        p.make_persistent(backend_id=BACKENDS[1])
        # run
        p.move(BACKENDS[0], recursive=True, remotes=False)
        after_sync = [o.get_all_locations() for o in (p, q, r)]
        asyncio.run(p.a_move(BACKENDS[1], recursive=True, remotes=False))
        after_async = [o.get_all_locations() for o in (p, q, r)]
        v = Person("vera", 1)
        v.move(BACKENDS[2])
        print(json.dumps({"sync": after_sync, "async": after_async, "volatile": v.get_all_locations(),
                          "names": p.friend_names(), "backends": BACKENDS}))
    """)
    # verify: the remote friend stays where it is; the volatile object is stored on the target
    b0, b1, b2 = made["backends"][:3]
    assert made["sync"] == [[b0], [b0], [b2]] and made["async"] == [[b1], [b1], [b2]]
    assert made["volatile"] == [b2] and made["names"] == ["quin", "rex"]


def test_moving_to_an_unknown_backend_is_a_clear_error_and_moves_nothing(cluster):
    out = run(cluster, """
        import uuid
        from dataclay import getRuntime
        from dataclay._internal.rpc import DataServiceClient
        c = Counter(4)
        c.make_persistent(alias="stay", backend_id=BACKENDS[0])
        unknown = str(uuid.uuid4())
        errors = []
        try:
            c.move(unknown)
        except BackendDoesNotExistError as e:
            errors.append(str(e))
        master = DataServiceClient(api.get_backends()[BACKENDS[0]].address, getRuntime().session.token)
        try:
            master.move(c.getID(), unknown)
        except BackendDoesNotExistError as e:
            errors.append(str(e))
        print(json.dumps({"errors": errors, "unknown": unknown, "locations": c.get_all_locations(),
                          "value": Counter.get_by_alias("stay").get(), "master": BACKENDS[0]}))
    """)
    assert len(out["errors"]) == 2 and all(out["unknown"] in e for e in out["errors"]), out["errors"]
    assert out["locations"] == [out["master"]] and out["value"] == 4
