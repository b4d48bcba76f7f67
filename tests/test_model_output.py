"""What model code prints and logs reaches its backend's log, each line led by the account (as the
Data Service knows it) and the call, and `dataclay logs` shows it; a tenant's output can neither forge
a line nor fill the disk."""
import json
import textwrap

import pytest

from harness.cluster import _command
from harness.following import follow_until_interrupted
from harness.models import write_model

MODEL = textwrap.dedent('''
    import logging
    import sys

    from dataclay import DataClayObject, activemethod

    log = logging.getLogger("chatty")


    class Chatty(DataClayObject):
        said: int

        def __init__(self):
            self.said = 0

        @activemethod
        def say(self, text: str) -> int:
            print("printed", text)
            print("to stderr", text, file=sys.stderr)
            log.warning("logged %s", text)
            self.said += 1
            return self.said

        @activemethod
        def flood(self, lines: int) -> int:
            for i in range(lines):
                print("flood line", i, "x" * 100)
            return lines
''')
RATE = 2000  # bytes/s an account's process may write: bursts of 64 * RATE


@pytest.fixture(scope="module")
def chatty(tmp_path_factory):
    """A one-backend cluster with the chatty model, and the account ann who calls it."""
    from conftest import started_cluster
    root = write_model(tmp_path_factory.mktemp("chatty-model"), "chatty", MODEL)
    cluster = started_cluster(backends=1, extra_env={"DATACLAY_EE_OUTPUT_BYTES_S": str(RATE)})
    try:
        cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "chatty", str(root), "python")
        cluster.dataclaycmd("NewAccount", "ann", "ann-password-12")
        cluster.env["PYTHONPATH"] = f"{root}:{cluster.env['PYTHONPATH']}"
        yield cluster
    finally:
        cluster.stop()


def _as_ann(cluster, body: str) -> dict:
    code = textwrap.dedent("""
        import json, os, sys
        os.environ.update(DATACLAY_USER="ann", DATACLAY_PASSWORD="ann-password-12")
        from dataclay import api
        api.init()
        from chatty.model import Chatty
    """) + textwrap.dedent(body)
    return json.loads(cluster.run_client(code).stdout.strip().splitlines()[-1])


def test_print_and_logging_in_a_method_reach_the_backend_log_with_account_and_call(chatty):
    # run: ann's call prints to stdout and stderr and logs a warning
    made = _as_ann(chatty, """
        c = Chatty(); c.make_persistent()
        print(json.dumps({"id": str(c.getID()), "said": c.say("hello")}))
    """)
    log = chatty.log_containing("backend-1", "logged hello")
    # verify: each line says who (ann, as the Data Service knows it) and which call
    call = f"call chatty.model.Chatty.say on {made['id']}: "
    lines = [line for line in log.splitlines() if "hello" in line]
    assert made["said"] == 1
    assert len(lines) == 3, log[-3000:]
    assert all(" python-ee ann (pid " in line and call in line for line in lines), lines
    assert any(line.endswith(call + "stdout: printed hello") for line in lines), lines
    assert any(line.endswith(call + "stderr: to stderr hello") for line in lines), lines
    assert any(line.endswith(call + "WARNING chatty: logged hello") for line in lines), lines
    # and `dataclay logs` shows them: one server's plainly, all of them prefixed with the server
    one = chatty.dataclay("logs", "backend-1")
    every = chatty.dataclay("logs", "--lines", "50")
    assert one.returncode == 0 and call + "stdout: printed hello" in one.stdout
    assert f"backend-1 | " in every.stdout and "logicmodule | " in every.stdout
    unknown = chatty.dataclay("logs", "backend-7")
    assert unknown.returncode == 1 and "no server named 'backend-7'" in unknown.stderr


def test_model_output_cannot_forge_a_line_of_another_account_or_drive_a_terminal(chatty):
    forged = "x\n2026-01-01 00:00:00 python-ee admin (pid 1): INFO dataclay.ee: granted\r\x1b[2J"
    _as_ann(chatty, f"""
        c = Chatty(); c.make_persistent()
        print(json.dumps({{"said": c.say({forged!r})}}))
    """)
    raw = chatty.log_containing("backend-1", "granted\\x0d\\x1b[2J")
    assert "\x1b" not in raw and "\r" not in raw
    forged_lines = [line for line in raw.splitlines() if "granted" in line]
    assert forged_lines and all(" python-ee ann (pid " in line.split("2026-01-01")[0] for line in forged_lines)
    assert not any(line.startswith("2026-01-01 00:00:00 python-ee admin") for line in raw.splitlines())


def test_a_loop_of_prints_is_cut_to_the_accounts_rate_and_the_rest_counted(chatty):
    log_file = chatty.home / "logs" / "backend-1.log"
    before = log_file.stat().st_size
    # run: about 2.3 MB of prints in one call, then a line after it
    _as_ann(chatty, """
        c = Chatty(); c.make_persistent()
        n = c.flood(20000)
        print(json.dumps({"n": n, "said": c.say("after the flood")}))
    """)
    log = chatty.log_containing("backend-1", "left out")
    grown = log_file.stat().st_size - before
    # verify: the burst (64 s of the rate) and little more reached the disk, and the drop is reported
    assert grown < 64 * RATE + 100_000, grown
    assert "DATACLAY_EE_OUTPUT_BYTES_S" in log and " python-ee ann (pid " in log.split("left out")[0].rsplit("\n", 1)[-1]


def test_logs_follow_shows_new_lines_until_interrupted(chatty):
    # (--lines 0: none of the old lines, which could fill the pipe this test reads only at the end)
    def ann_prints():
        _as_ann(chatty, """
            c = Chatty(); c.make_persistent()
            print(json.dumps({"said": c.say("while followed")}))
        """)
        chatty.log_containing("backend-1", "logged while followed")

    followed = follow_until_interrupted([_command("dataclay"), "logs", "backend-1", "--follow", "--lines", "0"],
                                        chatty.env, ann_prints)
    assert followed.returncode == 0, followed.stderr
    assert "stdout: printed while followed" in followed.stdout
