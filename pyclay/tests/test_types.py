"""The public API's annotations, as a type checker sees them: mypy (pinned in requirements-dev.txt,
configured in pyproject.toml) finds no error in the examples, infers the class a lookup is called
on (`Person.get_by_alias("x")` is a Person: typed_usage/tour_types.py), and reports the mistakes
typed_usage/wrong_types.py makes on purpose, each where it is marked."""
import pathlib
import re
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
USAGE = pathlib.Path(__file__).resolve().parent / "typed_usage"


def _mypy(tmp_path, *targets: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"),
                           "--cache-dir", str(tmp_path / "mypy-cache"), "--no-color-output", "--no-error-summary",
                           *map(str, targets)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)


def test_mypy_finds_no_error_in_the_examples(tmp_path):
    result = _mypy(tmp_path, REPO / "examples" / "wordcount")
    assert (result.returncode, result.stdout) == (0, ""), result.stdout + result.stderr


def test_lookups_return_the_class_they_are_called_on_and_the_api_is_typed(tmp_path):
    result = _mypy(tmp_path, USAGE / "tour_types.py")
    assert (result.returncode, result.stdout) == (0, ""), result.stdout + result.stderr


def test_type_mistakes_with_the_api_are_reported_where_they_are(tmp_path):
    # setup: the lines marked `# expect: <code>`
    source = USAGE / "wrong_types.py"
    expected = {(number, found.group(1)) for number, line in enumerate(source.read_text().splitlines(), 1)
                if (found := re.search(r"# expect: ([a-z-]+)$", line))}
    assert len(expected) >= 8
    # run
    result = _mypy(tmp_path, source)
    # verify
    reported = {(int(m.group(1)), m.group(2))
                for m in re.finditer(r"^[^:\n]+:(\d+): error: .*\[([a-z-]+)\]$", result.stdout, re.M)}
    assert result.returncode == 1
    assert reported == expected, result.stdout
