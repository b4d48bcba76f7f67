"""Counting what a warm client asks the Logic Module: the client process has made its first calls
(object located, session validated by the backend), printed "warm", and waits for a line on stdin."""
from __future__ import annotations

import json
import subprocess

from dataclay._internal.rpc import LogicModuleClient

# our own counting and the backends' heartbeats move whatever the client does
NOT_THE_CLIENTS = frozenset({"GetStats", "Heartbeat"})


def logic_module_calls_while_it_runs(cluster, warm: subprocess.Popen) -> tuple[dict, dict]:
    """Tells `warm` to go on; returns the JSON it prints next, and the Logic Module's RPCs (name ->
    calls) that moved meanwhile, NOT_THE_CLIENTS left out."""
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    lm.token = lm.new_session(cluster.admin_user(), cluster.admin_password(), "").token
    try:
        before = dict(lm.get_stats().calls)
        warm.stdin.write("go\n")
        warm.stdin.flush()
        result = json.loads(warm.stdout.readline())
        after = dict(lm.get_stats().calls)
    finally:
        lm.close()
    moved = {rpc: n - before.get(rpc, 0) for rpc, n in after.items()
             if rpc not in NOT_THE_CLIENTS and n != before.get(rpc, 0)}
    return result, moved
