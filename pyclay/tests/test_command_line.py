"""The command line's scripting surface, without a cluster: --version, help per command, usage on a
wrong number of arguments, `dataclay status --json` and its exit codes, `dataclay logs` on a home."""
import json
import os
import sys

import pytest

from dataclay._internal.cli import cluster
from dataclay._internal.cli.admin import dataclaycmd
from dataclay._internal.cli.local.logs import show_logs
from dataclay._internal.cli.local.status_report import BackendLine, StatusReport, exit_code, status_json
from dataclay._internal.version import DISTRIBUTION, VERSION
from dataclay.exceptions import InvalidArgumentError
from harness.following import follow_until_interrupted


def test_both_commands_print_the_distribution_and_its_version(capsys):
    assert dataclaycmd.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"dataclaycmd ({DISTRIBUTION}) {VERSION}"
    with pytest.raises(SystemExit) as done:
        cluster.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"dataclay ({DISTRIBUTION}) {VERSION}"


@pytest.mark.parametrize("argv", [["NewModel", "--help"], ["help", "NewModel"], ["NewModel", "alice", "-h"]])
def test_one_command_has_its_own_help_with_arguments_and_an_example(capsys, argv):
    assert dataclaycmd.main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: dataclaycmd NewModel <user> <pass> <namespace> <class_path> <python|java>")
    assert "example:\n  dataclaycmd NewModel " in out
    assert "GetBackends" not in out  # that command's help, not the whole list


def test_a_wrong_number_of_arguments_shows_that_commands_usage_not_the_list(capsys):
    assert dataclaycmd.main(["NewModel", "alice"]) == 2
    err = capsys.readouterr().err
    assert "NewModel takes 5 arguments, got 1" in err
    assert "usage: dataclaycmd NewModel <user>" in err and "dataclaycmd help NewModel" in err
    assert "GetBackends" not in err


def test_every_command_has_a_summary_and_an_example_of_itself():
    for name, command in dataclaycmd.COMMANDS.items():
        assert command.summary and command.example.startswith(("dataclaycmd " + name, "DATACLAY_")), name
        assert name in command.example
    listing = dataclaycmd.usage()
    assert all(f"  {name} " in listing for name in dataclaycmd.COMMANDS)


def test_unknown_commands_and_options_are_usage_errors(capsys):
    assert dataclaycmd.main(["NoSuchCommand"]) == 2
    assert "unknown command 'NoSuchCommand'" in capsys.readouterr().err
    assert dataclaycmd.main(["help", "NoSuchCommand"]) == 2
    assert dataclaycmd.main(["GetBackends", "alice", "-", "--yaml"]) == 2
    assert "the only one is --json" in capsys.readouterr().err
    assert dataclaycmd.main(["WaitForBackends", "python", "1", "--timeout", "soon"]) == 2
    assert "must be a number of seconds" in capsys.readouterr().err
    assert dataclaycmd.main(["WaitForBackends", "python", "1", "--wait", "3"]) == 2
    with pytest.raises(SystemExit) as bad:
        cluster.main(["status", "--timeout", "-1"])
    assert bad.value.code == 2


def _report(*backends) -> StatusReport:
    return StatusReport(lm_address="127.0.0.1:1", lm_alive=True, lm_version="0.9", backends=list(backends))


def test_status_json_is_one_document_with_health_first_and_fixed_keys():
    up = BackendLine(name="backend-1", backend_id="a", address="h:1", alive=True, engine="kv", objects=3)
    document = json.loads(status_json(_report(up)))
    assert list(document)[:3] == ["health", "lm_address", "lm_alive"]
    assert document["health"] == "up"
    assert document["backends"][0]["name"] == "backend-1" and document["backends"][0]["objects"] == 3
    assert set(document["backends"][0]) == {"name", "backend_id", "address", "alive", "engine", "durability",
                                            "objects", "collected", "used", "capacity", "encrypted", "environments",
                                            "problem"}


def test_status_exits_0_when_all_answer_3_when_a_backend_is_down_1_when_the_logic_module_is():
    up = BackendLine(name="backend-1", backend_id="a", address="h:1", alive=True)
    down = BackendLine(name="backend-2", backend_id="b", address="h:2", alive=False)
    silent = BackendLine(name="backend-3", backend_id="c", address="h:3", alive=True, problem="no answer")
    assert exit_code(_report(up)) == 0
    assert exit_code(_report(up, down)) == 3 and json.loads(status_json(_report(up, down)))["health"] == "degraded"
    assert exit_code(_report(up, silent)) == 3
    lm_down = StatusReport(lm_address="127.0.0.1:1", lm_alive=False, problem="cannot reach")
    assert exit_code(lm_down) == 1 and json.loads(status_json(lm_down))["health"] == "down"


def _home(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "logicmodule.log").write_text("lm started\n")
    (logs / "backend-2.log").write_text("b2 line\n")
    (logs / "backend-1.log").write_text("b1 first\nb1 second \x1b[31mred\n")
    return tmp_path


def test_logs_show_every_server_prefixed_or_one_and_escape_control_characters(tmp_path, capsys):
    home = _home(tmp_path)
    show_logs(home, None, False, None)
    assert capsys.readouterr().out.splitlines() == [
        "logicmodule | lm started", "backend-1 | b1 first", "backend-1 | b1 second \\x1b[31mred",
        "backend-2 | b2 line"]
    show_logs(home, "backend-1", False, 1)
    assert capsys.readouterr().out == "b1 second \\x1b[31mred\n"


def test_logs_refuse_an_unknown_server_and_a_home_without_a_cluster(tmp_path):
    home = _home(tmp_path)
    with pytest.raises(InvalidArgumentError, match=r"no server named 'backend-9'.*logicmodule, backend-1, backend-2"):
        show_logs(home, "backend-9", False, None)
    with pytest.raises(InvalidArgumentError, match="dataclay start"):
        show_logs(tmp_path / "elsewhere", None, False, None)


def test_logs_follow_prints_new_lines_until_interrupted(tmp_path):
    home = _home(tmp_path)
    env = {**os.environ, "DATACLAY_HOME": str(home)}
    home.chmod(0o700)
    for p in [home / "logs", *(home / "logs").iterdir()]:
        p.chmod(0o700 if p.is_dir() else 0o600)

    def write_a_line():
        with open(home / "logs" / "backend-1.log", "a") as log:
            log.write("written later\n")

    followed = follow_until_interrupted([sys.executable, "-m", "dataclay._internal.cli.cluster", "logs", "backend-1",
                                         "--follow"], env, write_a_line, settle=1.5, timeout=20)
    assert followed.returncode == 0, followed.stderr
    assert followed.stdout.splitlines()[-1] == "written later", followed.stdout
