"""Class-data-sharing archives of the server jars: a JVM started with its jar's archive maps the
classes it needs already parsed and verified instead of loading them from the jar, so a server
starts sooner and a restarted backend is away for less time (benchmarks/startup.py). `make build`
records them (`scripts/class_archives.py`); the launcher uses one only while it is fresh. The wheel
carries none: an archive fits only the JVM build that wrote it, so a pip-installed pmclay starts its
servers without one (about 1 s slower per start)."""
from __future__ import annotations

import pathlib

MODES = ("use", "off", "record")


def archive_of(jar: pathlib.Path) -> pathlib.Path:
    """Where the archive of `jar` lives: beside it, named after it."""
    return jar.with_suffix(".jsa")


def recording_of(jar: pathlib.Path) -> pathlib.Path:
    """Where a recording JVM writes the archive of `jar` at exit (renamed into place once whole)."""
    return jar.with_suffix(".jsa.new")


def jvm_options(jar: pathlib.Path, mode: str) -> list[str]:
    """The JVM options for starting `jar` in `mode` (see MODES)."""
    if mode == "record":
        # the dump lists every class it leaves out as a warning: nothing a user needs to read
        return [f"-XX:ArchiveClassesAtExit={recording_of(jar)}", "-Xlog:cds=off", "-Xlog:cds+dynamic=off"]
    archive = archive_of(jar)
    if mode == "off" or not fresh(jar):
        return []
    return [f"-XX:SharedArchiveFile={archive}"]


def fresh(jar: pathlib.Path) -> bool:
    """Whether the archive of `jar` exists and is newer than the jar (recorded from this jar)."""
    archive = archive_of(jar)
    try:
        return archive.stat().st_mtime >= jar.stat().st_mtime
    except OSError:
        return False
