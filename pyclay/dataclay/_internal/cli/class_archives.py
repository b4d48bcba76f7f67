"""Class-data-sharing archives of the server jars: a JVM started with its jar's archive maps the
classes it needs already parsed and verified instead of loading them from the jar, which more
than halves a server's start (and so the time a restarted backend is away). `make build` records
them (`scripts/class_archives.py`); the launcher uses one only while it is newer than its jar."""
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
    if mode == "off" or not _fresh(archive, jar):
        return []
    return [f"-XX:SharedArchiveFile={archive}"]


def _fresh(archive: pathlib.Path, jar: pathlib.Path) -> bool:
    try:
        return archive.stat().st_mtime >= jar.stat().st_mtime
    except OSError:
        return False
