"""The parts of listing that need no cluster: dataclaycmd's option parsing, tables and --limit, and how a
class to list is named (the listings themselves run against a real cluster in tests/test_listing.py)."""
import pytest

from dataclay import DataClayObject
from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.cli.admin import dataclaycmd
from dataclay._internal.cli.admin.listing_commands import _parse, _table, _take
from dataclay._internal.runtime import listing


class Gadget(DataClayObject):
    size: int


def test_options_are_parsed_and_unknown_ones_or_extra_arguments_are_usage_errors():
    # run
    positional, opts = _parse("GetAliases", ("run*", "--dataset", "d", "--json"), 1, ("--dataset", "--limit"))
    # verify
    assert positional == ["run*"] and opts == {"--dataset": "d", "--json": True}
    for bad in (("--colour", "red"), ("a", "b"), ("--dataset",)):
        with pytest.raises(dataclaycmd.UsageError):
            _parse("GetAliases", bad, 1, ("--dataset", "--limit"))


def test_a_limit_takes_one_more_entry_to_know_whether_more_exist():
    # setup
    taken = []

    def entries():
        for i in range(100):
            taken.append(i)
            yield i

    # run
    first, more = _take(entries(), 3)
    # verify
    assert (first, more) == ([0, 1, 2], True) and taken == [0, 1, 2, 3]
    assert _take(iter([1, 2]), 3) == ([1, 2], False)


def test_tables_align_columns_and_show_missing_values_as_a_dash():
    assert _table(("A", "LONGER"), [("x", None), ("yyyy", 3)]).splitlines() == ["A     LONGER", "x     -",
                                                                                "yyyy  3"]


def test_a_class_to_list_is_named_by_its_stored_name_and_anything_else_is_refused():
    assert listing.class_name(Gadget) == f"{__name__}.Gadget"
    assert listing.class_name("pkg.mod.Cls") == "pkg.mod.Cls"
    assert listing.class_name(None) == ""
    for bad in (3, object, b"pkg.Cls"):
        with pytest.raises(InvalidArgumentError):
            listing.class_name(bad)
    with pytest.raises(InvalidArgumentError, match="page_size"):
        listing.aliases(lambda: None, "*", None, page_size=-1)
    with pytest.raises(InvalidArgumentError, match="pattern"):
        listing.aliases(lambda: None, 5)
