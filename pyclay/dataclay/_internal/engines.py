"""The store engines as Python sees them: one entry per engine, in the order of the Data Service's
registry (`java -jar dataservice.jar engines --json`, which tests/test_settings_tables.py holds
this view against). The launchers, the tests and the benchmarks ask this view; code that depends on
what an engine needs asks its properties (pmem_pool, pool_directory, database, durable), never its
name."""
from __future__ import annotations

from dataclasses import dataclass

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal import settings_table as table

# The keys every engine reads (DATACLAY_STORE, _PATH, _SIZE, _KEY_FILE: encryption wraps whichever engine
# runs) are the Data Service's; an engine lists only the keys that it alone reads, as the registry does.


@dataclass(frozen=True)
class Engine:
    """What one engine promises and needs."""

    name: str
    description: str
    durability: str             # what an acknowledged update survives
    pmem_pool: bool             # keeps its objects in a pmem pool through llpl, so needs PMDK's libraries
    pool_directory: bool        # its backends keep a directory of their own (DATACLAY_STORE_PATH)
    database: bool              # keeps its objects in a database named by DATACLAY_STORE_URL
    durable: bool               # false: memory only, nothing survives a stop
    setting_keys: tuple[str, ...]  # the keys of the settings table that only this engine reads

    def settings(self) -> tuple[table.Setting, ...]:
        """Its settings, from the settings table."""
        return tuple(table.setting(k) for k in self.setting_keys)


ENGINES: tuple[Engine, ...] = (
    Engine("kv", "serialised objects in a key-value store on a pmem pool (llpl / PMDK)",
           "durable and crash-consistent when a call returns: each write is one PMDK transaction",
           pmem_pool=True, pool_directory=True, database=False, durable=True, setting_keys=()),
    Engine("heap", "objects laid out field by field in an llpl transactional heap; an update writes only the "
                   "fields it changed",
           "durable and crash-consistent when a call returns; a method that changes one field writes that field in "
           "place, so an update costs what the field costs, not what the object costs",
           pmem_pool=True, pool_directory=True, database=False, durable=True, setting_keys=()),
    Engine("2lm", "a DRAM cache in front of a kv pool, written back at checkpoints",
           "weaker: everything acknowledged before the last completed checkpoint survives a crash, later writes "
           "may be lost; every object comes back whole",
           pmem_pool=True, pool_directory=True, database=False, durable=True,
           setting_keys=("DATACLAY_2LM_CACHE_SIZE", "DATACLAY_2LM_CHECKPOINT_MS")),
    Engine("postgres", "one row per object in PostgreSQL",
           "durable at commit (as durable as the server's fsync setting)",
           pmem_pool=False, pool_directory=True, database=True, durable=True,
           setting_keys=("DATACLAY_STORE_URL",)),
    Engine("memory", "plain DRAM, the benchmark baseline", "none: a stop or crash loses everything",
           pmem_pool=False, pool_directory=False, database=False, durable=False, setting_keys=()),
)
ENGINE_NAMES: tuple[str, ...] = tuple(e.name for e in ENGINES)
_BY_NAME = {e.name: e for e in ENGINES}


def default_engine() -> Engine:
    """The engine of a cluster that names none (DATACLAY_STORE's default)."""
    return _BY_NAME[table.setting("DATACLAY_STORE").default]


def engine(name: str, where: str = "store engine") -> Engine:
    """The engine called `name`; InvalidArgumentError naming `where` the name came from."""
    found = _BY_NAME.get(name)
    if found is None:
        raise InvalidArgumentError(f"{where}: unknown store engine {name!r}; choose one of {', '.join(ENGINE_NAMES)}")
    return found
