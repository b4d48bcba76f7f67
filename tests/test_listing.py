"""Seeing what is stored (issue 23, item 9) on a real cluster: datasets, aliases by pattern and objects
by class, from the Python API (sync and asyncio) and from dataclaycmd, paged, and only what each account
may see: alice owns some datasets and holds contracts on some of bob's; bob's private dataset, and
contracts that expired or were revoked, stay hidden from her."""
import datetime
import json
import textwrap
import time
import uuid

import pytest

from dataclay.exceptions import InvalidArgumentError, PermissionDeniedError
from dataclay._internal.rpc import LogicModuleClient
from dataclay._internal.runtime import listing

from conftest import started_cluster

ALICE, ALICE_PW = "alice", "alice-password-1"
BOB, BOB_PW = "bob", "bob-password-12"
COUNTERS = 25

PRELUDE = textwrap.dedent("""
    import asyncio, json, sys
    from dataclay import Client, api
    from people.model import Counter, Person
""")


@pytest.fixture(scope="module", params=["embedded", "postgres"])
def cluster(request):
    """One backend; the Logic Module's metadata in its embedded database, or in PostgreSQL (whose LIKE
    and collation differ from SQLite's)."""
    url = None
    if request.param == "postgres":
        url = request.getfixturevalue("postgres").create_database(f"listing_{uuid.uuid4().hex[:12]}")
    shared = started_cluster(backends=1, metadata_url=url)
    yield shared
    shared.stop()


def _client(cluster, user: str, password: str, body: str, dataset: str = "") -> dict:
    """Runs `body` in a client process as `user` (objects go to `dataset`); it prints one JSON line."""
    code = PRELUDE + textwrap.dedent(f"""
        client = Client(username={user!r}, password={password!r}, dataset={dataset or user!r})
        client.start()
    """) + textwrap.dedent(body)
    return json.loads(cluster.run_client(code).stdout.strip().splitlines()[-1])


def _lm(cluster, user: str, password: str) -> LogicModuleClient:
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    lm.token = lm.new_session(user, password, "").token
    return lm


@pytest.fixture(scope="module")
def world(cluster):
    """alice: her own dataset with people and counters, and alice.notes (made with NewDataset); bob: his own
    dataset, bob.shared (read-only for alice) and bob.private (nobody's but his), each with an alias."""
    cluster.dataclaycmd("NewAccount", ALICE, ALICE_PW)
    cluster.dataclaycmd("NewAccount", BOB, BOB_PW)
    made = cluster.dataclaycmd("NewDataset", ALICE, ALICE_PW, "alice.notes").stdout
    for name in ("bob.shared", "bob.private"):
        cluster.dataclaycmd("NewDataset", BOB, BOB_PW, name)
    cluster.dataclaycmd("NewDataContract", BOB, BOB_PW, "bob.shared", ALICE, "--read-only")
    mine = _client(cluster, ALICE, ALICE_PW, f"""
        people = {{}}
        for alias in ("run_1", "runX1", "run-2"):
            p = Person(alias, 30); p.make_persistent(alias=alias); people[alias] = p.getID()
        plain = Person("nobody", 1); plain.make_persistent()
        counters = []
        for i in range({COUNTERS}):
            c = Counter(i); c.make_persistent(alias=f"c-{{i:02d}}"); counters.append(c.getID())
        print(json.dumps({{"people": people, "plain": plain.getID(), "counters": counters}}))
    """)
    shared = _client(cluster, BOB, BOB_PW, """
        p = Person("shared", 40); p.make_persistent(alias="shared-1")
        print(json.dumps({"id": p.getID()}))
    """, dataset="bob.shared")
    private = _client(cluster, BOB, BOB_PW, """
        p = Person("private", 50); p.make_persistent(alias="run_9")
        print(json.dumps({"id": p.getID()}))
    """, dataset="bob.private")
    return {"made": made, "alice": mine, "shared": shared["id"], "private": private["id"]}


def test_a_user_lists_its_datasets_and_contracts_in_force_with_counts(cluster, world):
    # run
    seen = _client(cluster, ALICE, ALICE_PW, """
        print(json.dumps([d._asdict() for d in api.list_datasets()]))
    """)
    # verify
    assert "alice.notes" in world["made"]
    assert seen == [
        {"name": "alice", "owner": "alice", "access": "owner", "contract_expires_at_ms": 0,
         "objects": 4 + COUNTERS},
        {"name": "alice.notes", "owner": "alice", "access": "owner", "contract_expires_at_ms": 0, "objects": 0},
        {"name": "bob.shared", "owner": "bob", "access": "read-only", "contract_expires_at_ms": 0, "objects": 1},
    ]


def test_aliases_match_a_glob_whose_sql_wildcards_quotes_and_backslashes_are_literal(cluster, world):
    # run
    seen = _client(cluster, ALICE, ALICE_PW, r"""
        out = {}
        for pattern in ("run_?", "run?1", "run*", "run%", "run_%", "run\\1", "run'1", "' OR '1'='1", "*'*",
                        "r[u]n_1", "RUN_1", "shared-?"):
            out[pattern] = [(a.dataset, a.alias) for a in api.list_aliases(pattern)]
        print(json.dumps(out))
    """)
    # verify: '_' and '%' are no wildcards; only '*' and '?' are
    assert seen["run_?"] == [["alice", "run_1"]]
    # (in the database's collation: byte order on SQLite, the database's own on PostgreSQL)
    assert sorted(seen["run?1"]) == [["alice", "runX1"], ["alice", "run_1"]]
    assert sorted(seen["run*"]) == [["alice", "run-2"], ["alice", "runX1"], ["alice", "run_1"]]
    for literal in ("run%", "run_%", "run\\1", "run'1", "' OR '1'='1", "*'*", "r[u]n_1", "RUN_1"):
        assert seen[literal] == [], literal
    assert seen["shared-?"] == [["bob.shared", "shared-1"]]


def test_another_users_private_dataset_stays_hidden_and_is_refused_by_name(cluster, world):
    # run
    seen = _client(cluster, ALICE, ALICE_PW, """
        from dataclay.exceptions import PermissionDeniedError
        every = [(a.dataset, a.alias) for a in api.list_aliases()]
        people = [o.dataset for o in api.list_objects(Person)]
        refused = []
        for ds in ("bob.private", "no.such.dataset"):
            try:
                list(api.list_aliases(dataset=ds))
            except PermissionDeniedError as e:
                refused.append(str(e).replace(ds, "X"))
        print(json.dumps({"every": every, "people": people, "refused": refused}))
    """)
    # verify: bob's run_9 in bob.private appears nowhere; both refusals say the same
    assert ["bob.private", "run_9"] not in seen["every"] and "bob.private" not in seen["people"]
    assert ["bob.shared", "shared-1"] in seen["every"]
    assert len(seen["refused"]) == 2 and seen["refused"][0] == seen["refused"][1]


def test_listing_pages_through_the_logic_module_a_page_at_a_time(cluster, world):
    # setup
    admin = _lm(cluster, cluster.admin_user(), cluster.admin_password())
    before = admin.get_stats().calls.get("ListAliases", 0)
    # run
    seen = _client(cluster, ALICE, ALICE_PW, """
        it = api.list_aliases("c-*", page_size=10)
        first = next(it)
        print(json.dumps({"first": first.alias, "rest": [a.alias for a in it]}))
    """)
    after = admin.get_stats().calls["ListAliases"]
    # verify: 25 aliases in pages of 10: three calls, each page asked when the one before is used up
    assert [seen["first"]] + seen["rest"] == [f"c-{i:02d}" for i in range(COUNTERS)]
    assert after - before == 3


def test_objects_of_a_class_come_with_their_backend_and_aliases(cluster, world):
    # run
    seen = _client(cluster, ALICE, ALICE_PW, """
        backends = list(api.get_backends())
        counters = list(api.list_objects(Counter, page_size=7))
        people = list(api.list_objects("people.model.Person", dataset="alice"))
        shared = list(api.list_objects(Person, dataset="bob.shared"))
        print(json.dumps({"backends": backends, "counters": [(o.id, o.aliases, o.master_backend_id) for o in counters],
                          "people": sorted(a for o in people for a in o.aliases), "n_people": len(people),
                          "shared": [(o.id, o.dataset) for o in shared]}))
    """)
    # verify
    counters = seen["counters"]
    assert sorted(o[0] for o in counters) == sorted(world["alice"]["counters"])
    assert [o[0] for o in counters] == sorted(o[0] for o in counters), "by ID within a dataset and class"
    assert all(len(o[1]) == 1 and o[1][0].startswith("c-") and o[2] in seen["backends"] for o in counters)
    assert seen["people"] == ["run-2", "runX1", "run_1"] and seen["n_people"] == 4
    assert seen["shared"] == [[world["shared"], "bob.shared"]]


def test_asyncio_clients_list_with_async_for(cluster, world):
    seen = _client(cluster, ALICE, ALICE_PW, """
        async def main():
            datasets = [d.name async for d in client.a_list_datasets(count_objects=False)]
            aliases = [a.alias async for a in client.a_list_aliases("c-1?", page_size=4)]
            objects = [o.id async for o in client.a_list_objects(Counter, dataset="alice")]
            return {"datasets": datasets, "aliases": aliases, "objects": len(objects)}
        print(json.dumps(asyncio.run(main())))
    """)
    assert seen == {"datasets": ["alice", "alice.notes", "bob.shared"],
                    "aliases": [f"c-1{i}" for i in range(10)], "objects": COUNTERS}


def test_expired_and_revoked_contracts_hide_their_datasets_at_once(cluster, world):
    # setup: two more of bob's datasets for alice, one contract ending in a few seconds
    for name in ("bob.brief", "bob.revoked"):
        cluster.dataclaycmd("NewDataset", BOB, BOB_PW, name)
    ends = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=4)
    cluster.dataclaycmd("NewDataContract", BOB, BOB_PW, "bob.brief", ALICE, "--expires", ends.isoformat())
    cluster.dataclaycmd("NewDataContract", BOB, BOB_PW, "bob.revoked", ALICE)
    alice = _lm(cluster, ALICE, ALICE_PW)
    names = lambda: [d.name for d in listing.datasets(lambda: alice, count_objects=False)]  # noqa: E731
    before = names()
    # run
    cluster.dataclaycmd("RevokeDataContract", BOB, BOB_PW, "bob.revoked", ALICE)
    revoked = names()
    time.sleep(max(0.0, (ends - datetime.datetime.now(datetime.timezone.utc)).total_seconds()) + 0.5)
    expired = names()
    # verify
    assert {"bob.brief", "bob.revoked"} <= set(before)
    assert "bob.revoked" not in revoked and "bob.brief" in revoked
    assert "bob.brief" not in expired and "bob.shared" in expired
    with pytest.raises(PermissionDeniedError):
        list(listing.aliases(lambda: alice, "*", "bob.brief"))
    alice.close()


def test_bad_listing_arguments_get_clear_errors(cluster, world):
    alice = _lm(cluster, ALICE, ALICE_PW)
    try:
        with pytest.raises(InvalidArgumentError, match="page_token"):
            alice.list_aliases(page_token="not-a-token")
        with pytest.raises(InvalidArgumentError, match="page_token"):
            token = alice.list_aliases("c-*", page_size=2).next_page_token
            alice.list_aliases("run*", page_size=2, page_token=token)
        with pytest.raises(InvalidArgumentError, match="pattern"):
            alice.list_aliases("bad\x00pattern")
        with pytest.raises(InvalidArgumentError, match="page_size"):
            alice.list_objects(page_size=-3)
        with pytest.raises(InvalidArgumentError, match="class_name"):
            alice.list_objects("x'; DROP TABLE objects; --")
        assert len(alice.list_aliases(page_size=10**9).aliases) == 3 + COUNTERS + 1  # capped, all fit
    finally:
        alice.close()


def test_dataclaycmd_lists_as_tables_and_json_and_stops_at_a_limit(cluster, world):
    # run
    datasets = cluster.dataclaycmd("GetDatasets", ALICE, ALICE_PW).stdout
    datasets_json = json.loads(cluster.dataclaycmd("GetDatasets", ALICE, ALICE_PW, "--json").stdout)
    aliases = cluster.dataclaycmd("GetAliases", ALICE, ALICE_PW, "run_?").stdout
    aliases_json = json.loads(cluster.dataclaycmd("GetAliases", ALICE, ALICE_PW, "shared*", "--json").stdout)
    objects = cluster.dataclaycmd("GetObjects", ALICE, ALICE_PW, "people.model.Counter", "--limit", "5").stdout
    objects_json = json.loads(cluster.dataclaycmd("GetObjects", ALICE, ALICE_PW, "people.model.Person", "--dataset",
                                                  "alice", "--json").stdout)
    nothing = cluster.dataclaycmd("GetAliases", ALICE, ALICE_PW, "run%").stdout
    hidden = cluster.dataclaycmd("GetAliases", ALICE, ALICE_PW, "--dataset", "bob.private", check=False)
    unknown = cluster.dataclaycmd("GetObjects", ALICE, ALICE_PW, "--colour", "red", check=False)
    admin = json.loads(cluster.dataclaycmd("GetDatasets", cluster.admin_user(), "-", "--json").stdout)
    # verify
    lines = datasets.splitlines()
    assert lines[0].split() == ["DATASET", "OWNER", "ACCESS", "OBJECTS", "CONTRACT", "ENDS"]
    assert lines[2].split() == ["alice.notes", "alice", "owner", "0"]
    assert any(line.split() == ["bob.shared", "bob", "read-only", "1", "never"] for line in lines)
    assert [d["name"] for d in datasets_json][:3] == ["alice", "alice.notes", "bob.shared"]
    assert datasets_json[1] == {"name": "alice.notes", "owner": "alice", "access": "owner", "objects": 0,
                                "contract_expires_at": None}
    assert aliases.splitlines()[1].split()[:3] == ["alice", "run_1", "people.model.Person"]
    assert len(aliases.splitlines()) == 2 and "backend-1" in aliases
    assert aliases_json == [{"alias": "shared-1", "dataset": "bob.shared", "object_id": world["shared"],
                             "class": "people.model.Person", "language": "python",
                             "backend_id": aliases_json[0]["backend_id"], "backend": "backend-1"}]
    assert len(objects.splitlines()) == 1 + 5 + 1 and "raise --limit" in objects.splitlines()[-1]
    assert sorted(o["id"] for o in objects_json) == sorted([*world["alice"]["people"].values(),
                                                           world["alice"]["plain"]])
    assert nothing.strip() == "no aliases match 'run%'"
    assert hidden.returncode == 1 and "may not see dataset 'bob.private'" in hidden.stderr
    assert unknown.returncode == 2 and "--colour" in unknown.stderr
    private = next(d for d in admin if d["name"] == "bob.private")
    assert private == {"name": "bob.private", "owner": "bob", "access": "none", "objects": 1,
                       "contract_expires_at": None}


def test_get_data_contracts_prints_a_dataset_made_with_new_dataset_once(cluster, world):
    # run
    out = cluster.dataclaycmd("GetDataContracts", ALICE, ALICE_PW).stdout
    # verify: alice's own contract on alice.notes, and bob's read-only one to her
    lines = out.splitlines()
    assert len([line for line in lines if line.startswith("alice.notes ")]) == 1, out
    assert len([line for line in lines if line.startswith("bob.shared ")]) == 1, out
