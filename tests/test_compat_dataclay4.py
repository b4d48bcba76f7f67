"""Programs written for dataClay 4 run unchanged on a real cluster: a program with Client and its
asyncio calls (a_ variants, an awaited `async def` active method, many calls at once from one event
loop, without a thread each), the synchronous calls and object-store calls in a `with Client()` block,
and the errors bad input gets (an alias that exists, a missing object or alias, dc_update from an
object of another class, an `a_` call in a process without a started Client)."""
import json
import textwrap

# A dataClay 4 program: only dataClay 4 names. argv[1..5]: host, port, user, password, dataset.
DATACLAY4_PROGRAM = textwrap.dedent("""
    import asyncio, json, sys, threading
    from dataclay import Client, StorageObject
    from dataclay.exceptions import AliasAlreadyExistError, DataClayException, DoesNotExistError
    from people.model import Counter, Person

    async def main():
        client = Client(host=sys.argv[1], port=int(sys.argv[2]), username=sys.argv[3], password=sys.argv[4],
                        dataset=sys.argv[5])
        client.start()
        try:
            backends = list(await client.a_get_backends())
            ann = Person("ann", 30)
            await ann.a_make_persistent("ann4", backend_id=backends[0])
            found = await Person.a_get_by_alias("ann4")
            by_id = await StorageObject.a_get_by_id(ann.getID())
            await found.a_add_alias("anne4")
            aliases = sorted(await found.a_get_aliases())
            await Person.a_delete_alias("anne4", dataset_name=sys.argv[5])
            aliases_after = sorted(await found.a_get_aliases())
            await found.a_move(backends[1])
            await found.a_new_replica(backends[0])
            await found.a_sync()
            version = await found.a_new_version()
            version.birthday()
            await version.a_consolidate_version()
            properties = await found.a_get_properties()
            counter = Counter(0)
            counter.make_persistent("counter4")
            awaited = await counter.increment_later(5, 0.01)
            # 200 objects made persistent at once, then an awaited method on each, then their state read
            counters = [Counter(0) for _ in range(200)]
            threads_before = threading.active_count()
            made = [asyncio.ensure_future(c.a_make_persistent()) for c in counters]
            await asyncio.sleep(0)
            threads_during = threading.active_count()
            await asyncio.gather(*made)
            incremented = await asyncio.gather(*(c.increment_later(1) for c in counters))
            states = await asyncio.gather(*(c.a_get_properties() for c in counters))
            errors = {}
            for name, call in (("alias exists", Person("bob", 1).a_make_persistent("ann4")),
                               ("missing", Person.a_get_by_id("00000000-0000-4000-8000-000000000000"))):
                try:
                    await call
                except DataClayException as e:
                    errors[name] = [type(e).__name__, isinstance(e, (AliasAlreadyExistError, DoesNotExistError)),
                                    "ann4" in str(e) or "00000000-0000-4000-8000-000000000000" in str(e)]
            return {"same": found is ann and by_id is ann, "aliases": [aliases, aliases_after], "age": found.age,
                    "properties": properties, "locations": found.get_all_locations(), "backends": backends,
                    "awaited": awaited, "incremented": sum(incremented), "values": sum(x["value"] for x in states),
                    "errors": errors,
                    "extra_threads": threads_during - threads_before}
        finally:
            client.stop()

    print(json.dumps(asyncio.run(main())))
""")

# dataClay 4's synchronous calls in a `with Client()` block (configuration from the environment): the
# object calls, the object-store calls, and what bad input gets.
OBJECT_STORE_PROGRAM = textwrap.dedent("""
    import json
    from dataclay import Client, StorageObject
    from dataclay.exceptions import AliasAlreadyExistError, DataClayException, DoesNotExistError
    from people.model import Account, Person

    with Client() as client:
        backends = sorted(client.get_backends())
        Person("kim", 20).dc_put("kim4", backend_id=backends[0])
        Person("lee", 30).dc_put("lee4")
        copy = Person.dc_clone_by_alias("kim4")
        copy.age = 21
        Person.dc_update_by_alias("kim4", copy)
        kim = Person.get_by_alias("kim4")
        kim.add_alias("kimberly4")
        aliases = sorted(kim.get_aliases())
        Person.delete_alias("kimberly4")
        aliases_after = sorted(kim.get_aliases())
        local = kim.dc_clone()
        local.name = "Kim"
        kim.dc_update(local)
        kim.sync()
        out = {"copy_persistent": bool(copy.is_persistent), "local_persistent": local.is_persistent,
               "aliases": [aliases, aliases_after], "by_id": Person.get_by_id(kim.getID()) is kim,
               "any_class": StorageObject.get_by_id(kim.getID()) is kim, "properties": kim.get_properties(),
               "backends": backends, "where": kim.get_all_locations()}
        errors = {}
        missing = "00000000-0000-4000-8000-000000000000"
        for name, call in (("alias exists", lambda: Person("x", 1).dc_put("kim4")),
                           ("alias exists, add_alias", lambda: kim.add_alias("lee4")),
                           ("missing", lambda: Person.get_by_id(missing)),
                           ("missing alias", lambda: Person.dc_clone_by_alias("nobody4")),
                           ("wrong class", lambda: kim.dc_update(Account("kim", 5))),
                           ("wrong class by alias", lambda: Person.dc_update_by_alias("kim4", Account("kim", 5)))):
            try:
                call()
                errors[name] = None
            except DataClayException as e:
                errors[name] = [type(e).__name__, str(e), isinstance(e, (AliasAlreadyExistError, DoesNotExistError))]
        out["errors"] = errors
        out["after_errors"] = kim.get_properties()
    print(json.dumps(out))
""")

# An `a_` call in a process that never started a Client, then after one was stopped.
NO_CLIENT = textwrap.dedent("""
    import asyncio, json
    from dataclay import Client
    from dataclay.exceptions import NotAuthenticatedError
    from people.model import Person

    errors = []
    for when in ("never started", "stopped"):
        if when == "stopped":
            with Client():
                pass
        try:
            asyncio.run(Person.a_get_by_alias("ann4"))
            errors.append(None)
        except NotAuthenticatedError as e:
            errors.append([type(e).__name__, str(e)])
    print(json.dumps(errors))
""")


def last_json(result):
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_dataclay_4_program_with_client_and_asyncio_calls_runs_unchanged(cluster):
    # setup
    props = cluster.client_properties()
    args = ("127.0.0.1", str(cluster.port), props["DATACLAY_USER"], props["DATACLAY_PASSWORD"], props["DATACLAY_USER"])
    # run
    out = last_json(cluster.run_client(DATACLAY4_PROGRAM, *args, timeout=300))
    # verify
    assert out["same"] is True and out["aliases"] == [["ann4", "anne4"], ["ann4"]] and out["age"] == 31
    assert out["properties"] == {"name": "ann", "age": 31, "friends": []}
    assert out["locations"][0] == out["backends"][1] and sorted(out["locations"]) == sorted(out["backends"])
    assert out["awaited"] == 5 and out["incremented"] == out["values"] == 200
    assert out["errors"] == {"alias exists": ["AliasAlreadyExistsError", True, True],
                             "missing": ["ObjectDoesNotExistError", True, True]}
    assert out["extra_threads"] <= 2  # 200 calls in flight, no thread each


def test_dataclay_4_synchronous_calls_in_a_with_client_block_and_the_errors_of_bad_input(cluster):
    # run
    out = last_json(cluster.run_client(OBJECT_STORE_PROGRAM))
    # verify: whole-object copies and updates, aliases, lookups by ID
    assert out["copy_persistent"] is False and out["local_persistent"] is False
    assert out["aliases"] == [["kim4", "kimberly4"], ["kim4"]]
    assert out["by_id"] is True and out["any_class"] is True
    assert out["properties"] == {"name": "Kim", "age": 21, "friends": []}
    assert out["where"] == [out["backends"][0]]
    # verify: each bad input got its own error, saying what was wrong, and changed nothing
    errors = out["errors"]
    assert errors["alias exists"][0] == "AliasAlreadyExistsError" and "kim4" in errors["alias exists"][1]
    taken = errors["alias exists, add_alias"]
    assert taken[0] == "AliasAlreadyExistsError" and "lee4" in taken[1]
    assert errors["missing"][0] == "ObjectDoesNotExistError"
    assert "00000000-0000-4000-8000-000000000000" in errors["missing"][1]
    assert errors["missing alias"][0] == "AliasDoesNotExistError" and "nobody4" in errors["missing alias"][1]
    assert all(errors[name][2] for name in ("alias exists", "alias exists, add_alias", "missing", "missing alias"))
    for name in ("wrong class", "wrong class by alias"):
        assert errors[name][0] == "InvalidArgumentError", errors[name]
        assert "must be a people.model.Person" in errors[name][1] and "people.model.Account" in errors[name][1]
    assert out["after_errors"] == out["properties"]


def test_an_async_call_without_a_started_client_says_how_to_start_one(cluster):
    # run
    out = last_json(cluster.run_client(NO_CLIENT))
    # verify: before any Client and after one stopped, the same clear error
    assert len(out) == 2
    for error in out:
        assert error is not None and error[0] == "NotAuthenticatedError"
        assert "start a dataclay.Client" in error[1]
