"""The README's tours run as written, and every link in README.md and docs/ leads somewhere.

The tours' shell blocks are run in order in one bash, as a newcomer pastes them, against a cluster
of their own (its own DATACLAY_HOME, port and pools) with no PYTHONPATH of the suite's: what the
tour needs, it must say. The Java tour's code blocks must be the example project's files."""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from harness.cluster import BIN, REPO, Cluster

README = REPO / "README.md"
DOCS = REPO / "docs"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def section(title: str) -> str:
    """The README text under `## title`, up to the next `## ` heading."""
    text = README.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def blocks(text: str, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(text) if lang == language]


def run_tour(script: str, cluster: Cluster, cwd: pathlib.Path) -> str:
    env = dict(cluster.env)
    env.pop("PYTHONPATH", None)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, f"the tour failed:\n{result.stdout}\n{result.stderr}\n{cluster.logs()}"
    return result.stdout


@pytest.fixture
def tour_cluster():
    cluster = Cluster(backends=1)  # its environment only: the tour starts and stops the cluster itself
    yield cluster
    cluster.stop()


def test_the_python_tour_runs_as_pasted(tour_cluster, tmp_path):
    out = run_tour("\n".join(blocks(section("A five-minute tour in Python"), "bash")), tour_cluster, tmp_path)
    assert "Person" in out and "alias='alice'" in out                          # make_alice.py's print
    assert "\n31\n" in out and "\n2.5\n" in out                                # birthday(), add_score() in the backend
    assert "alice bob [2.5 0.  0. ]" in out                                    # remote reads, a numpy field
    assert "AliasDoesNotExistError" in out and "stored on backend-1" in out
    assert "'age': 31" in out and "\n32\n" in out                              # the asyncio program
    assert "alice" in out.split("GetAliases", 1)[-1] or "alice" in out         # the listing
    assert not tour_cluster.pids(), "the tour's `dataclay stop` left servers running"


def test_the_java_tour_is_the_example_project_and_runs_as_pasted(tour_cluster, tmp_path):
    text = section("A five-minute tour in Java")
    sources = blocks(text, "java")
    assert len(sources) == 2
    for source in sources:
        path = source.splitlines()[0].removeprefix("// ")
        assert (REPO / path).read_text() == source.split("\n", 1)[1], f"README's {path} differs from the file"
    # the commands run from a copy of the project, so the repository gets no target/
    shutil.copytree(REPO / "examples" / "java-tour", tmp_path / "examples" / "java-tour",
                    ignore=shutil.ignore_patterns("target"))
    out = run_tour("\n".join(blocks(text, "bash")), tour_cluster, tmp_path)
    runs = re.findall(r"^run (\d+), counted on backend [0-9a-f-]{36}$", out, re.M)
    assert runs == ["1", "2"], out


LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(markdown: str) -> set[str]:
    """GitHub's anchors of a file's headings."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", FENCE.sub("", markdown), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


def test_every_link_in_the_readme_and_docs_leads_to_a_file_and_heading_that_exist():
    broken = []
    for page in [README, *sorted(DOCS.glob("*.md"))]:
        for target in LINK.findall(FENCE.sub("", page.read_text())):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, fragment = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.relative_to(REPO)}: {target} (no such file)")
            elif fragment and file.suffix == ".md" and fragment not in anchors(file.read_text()):
                broken.append(f"{page.relative_to(REPO)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)
