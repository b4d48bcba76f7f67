"""cli/common/placement.py and DATACLAY_CPUS: CPU lists are read as Linux writes them, each
backend gets its list or NUMA node in turn, what cannot be honoured is refused with what to do,
and a process started inside `placed` keeps the CPUs while its starter gets its own back."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal import settings_table as table
from dataclay._internal.cli.common import placement


def _cpus(text: str):
    return table.value("DATACLAY_CPUS", {"DATACLAY_CPUS": text})


def test_cpu_lists_read_as_linux_writes_them_and_bad_ones_are_refused_by_name():
    assert table.cpu_list("0-3,8") == {0, 1, 2, 3, 8}
    assert table.cpu_list(" 5 ") == {5}
    assert _cpus("0-1;2-3") == ({0, 1}, {2, 3})
    assert _cpus("numa") == "numa"
    assert table.value("DATACLAY_CPUS", {}) is None
    for bad in ("", "a", "3-1", "1,,2", "0-", "-1", "0;", "70000", "numa;0"):
        with pytest.raises(InvalidArgumentError, match="DATACLAY_CPUS must be numa, or CPU lists"):
            _cpus(bad)


def test_a_cpu_set_is_shown_as_a_cpu_list():
    assert placement.shown({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8"
    assert placement.shown({3}) == "3"


def test_backends_take_the_lists_in_turn_and_only_cpus_this_process_may_use():
    allowed = frozenset(range(8))
    spec = _cpus("0-3;4-7")
    assert [placement.cpus_for(spec, i, allowed) for i in range(3)] == [{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 2, 3}]
    assert placement.cpus_for(None, 0, allowed) is None
    with pytest.raises(InvalidArgumentError, match=r"backend 2 the CPU list 4-9, but this process may not use 8-9 "
                                                   r"\(it may use 0-7\)"):
        placement.cpus_for(_cpus("0;4-9"), 1, allowed)


def test_numa_puts_backend_i_on_node_i_mod_the_nodes_within_what_this_process_may_use(tmp_path):
    # a node of memory only (here node 1, between two with CPUs) is skipped; nodes keep their numbers
    for number, cpus in ((0, "0-3"), (1, ""), (2, "4-7"), (10, "8-9")):
        (tmp_path / f"node{number}").mkdir()
        (tmp_path / f"node{number}" / "cpulist").write_text(cpus + "\n")
    (tmp_path / "possible").write_text("0-2\n")
    nodes = placement.numa_nodes(tmp_path)
    assert nodes == [(0, {0, 1, 2, 3}), (2, {4, 5, 6, 7}), (10, {8, 9})]
    assert [placement.cpus_for("numa", i, frozenset(range(10)), nodes) for i in range(4)] == [
        {0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}, {0, 1, 2, 3}]
    assert placement.cpus_for("numa", 1, frozenset(range(6)), nodes) == {4, 5}
    with pytest.raises(InvalidArgumentError, match="NUMA node 2 .CPUs 4-7., none of which"):
        placement.cpus_for("numa", 1, frozenset({0}), nodes)
    with pytest.raises(InvalidArgumentError, match="shows no NUMA node"):
        placement.cpus_for("numa", 0, frozenset({0}), [])


def test_a_process_started_inside_placed_keeps_the_cpus_and_the_starter_gets_its_own_back():
    # setup
    before = os.sched_getaffinity(0)
    one = {min(before)}
    show = "import os; print(sorted(os.sched_getaffinity(0)))"

    # run
    with placement.placed(frozenset(one)):
        child = subprocess.Popen([sys.executable, "-c", show], stdout=subprocess.PIPE, text=True)
    out, _ = child.communicate(timeout=30)
    unplaced = subprocess.run([sys.executable, "-c", show], capture_output=True, text=True, timeout=30).stdout

    # verify
    assert out.strip() == str(sorted(one))
    assert os.sched_getaffinity(0) == before
    assert unplaced.strip() == str(sorted(before))
