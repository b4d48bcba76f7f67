"""The snapshot directory of `dataclay export` / `dataclay import` (docs/internals.md "Snapshots").

A snapshot is a directory (mode 0700, files 0600) holding `manifest.json`, `signature.json`
(snapshot_signing.py) and data files of delimited protobuf records (a varint length, then the
message; proto/dataclay/v1/snapshot.proto). The manifest names the format and its version, the
source, the counts, and every data file's size and SHA-256; it is written last, so a directory
without one is an export that did not finish.

A snapshot is its author's: an export writes only into a directory that is its own and nobody
else can write, and an import reads one that is the importer's (or root's) and nobody else can
write, through a descriptor held open, so what was checked is what is sent."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pathlib
import pwd
import re
import stat

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.rpc import framing

FORMAT = "dataclay-snapshot"
VERSION = 1
MANIFEST = "manifest.json"
METADATA_FILE = "metadata.dcs"
_FILE_NAME = re.compile(r"^(metadata|objects-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.dcs$")
_HASH_BLOCK = 16 << 20


class SnapshotError(InvalidArgumentError):
    """The directory is not a usable snapshot: not one at all, of a newer format, truncated or corrupted."""


@dataclasses.dataclass(frozen=True)
class DataFile:
    """A data file of a snapshot: its name, size, SHA-256 (hex), record count and, for objects, its backend."""

    name: str
    bytes: int
    sha256: str
    records: int
    backend_id: str | None = None


@dataclasses.dataclass
class Manifest:
    """What manifest.json says about a snapshot."""

    snapshot_id: str
    created_at: str
    cut_at_ms: int
    dataset: str
    password_hashes: bool
    source: dict
    counts: dict
    files: list
    format: str = FORMAT
    version: int = VERSION

    def to_json(self) -> str:
        data = dataclasses.asdict(self)
        data = {"format": data.pop("format"), "version": data.pop("version"), **data}
        return json.dumps(data, indent=2, sort_keys=False) + "\n"

    def objects_files(self) -> list:
        return [f for f in self.files if f.backend_id is not None]


def make_private_dir(path: pathlib.Path) -> tuple[pathlib.Path, bool]:
    """Creates `path` (mode 0700) unless it is an existing empty directory of the caller's; the path
    (absolute, its parent resolved) and whether it was created. Refused: a file, a symbolic link, a
    non-empty directory (an export never mixes with other files), a directory of another user or one
    that group or others can write, and a path under a directory someone else could rename it in
    (they could swap the snapshot before an import)."""
    path = pathlib.Path(path).expanduser().absolute()
    if path.is_symlink():
        raise InvalidArgumentError(f"{path} is a symbolic link: export into the directory itself")
    path = path.parent.resolve() / path.name
    _check_ancestors(path)
    if path.exists():
        if not path.is_dir():
            raise InvalidArgumentError(f"{path} exists and is not a directory")
        info = os.lstat(path)
        if info.st_uid != os.geteuid():
            raise InvalidArgumentError(f"{path} belongs to {user_name(info.st_uid)}, not to you: its owner could "
                                       f"swap the snapshot later; export into a new directory, or one of your own")
        if info.st_mode & 0o022:
            raise InvalidArgumentError(f"{path} can be written by group or others (mode "
                                       f"{stat.S_IMODE(info.st_mode):04o}): `chmod 700 {path}`, or export into a new "
                                       f"directory")
        if any(path.iterdir()):
            raise InvalidArgumentError(f"{path} is not empty: export into a new or empty directory")
        os.chmod(path, 0o700)
        return path, False
    path.mkdir(mode=0o700, parents=True)
    return path, True


def _check_ancestors(path: pathlib.Path) -> None:
    """Refuses a path with an existing directory above it that another user owns (root aside) or that
    group or others can write without the sticky bit: they could rename the snapshot's directory."""
    for parent in path.parents:
        try:
            info = os.lstat(parent)
        except FileNotFoundError:
            continue  # made by this export, 0700
        if info.st_uid not in (0, os.geteuid()):
            raise InvalidArgumentError(f"{parent}, above {path}, belongs to {user_name(info.st_uid)}, who could "
                                       f"replace the snapshot in it: export under directories of your own (or root's)")
        if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
            raise InvalidArgumentError(f"{parent}, above {path}, can be written by group or others without the "
                                       f"sticky bit (mode {stat.S_IMODE(info.st_mode):04o}), so they could replace "
                                       f"the snapshot in it: `chmod go-w {parent}`, or export elsewhere")


def user_name(uid: int) -> str:
    """A user as people know it: name and uid, or the uid alone."""
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


class SnapshotDirectory:
    """A snapshot directory opened for reading: held by a descriptor (renaming it, or a directory above,
    changes nothing read through it), and, like every file read from it, the reader's or root's, a
    regular file or directory (never a link) that group and others cannot write."""

    def __init__(self, path: pathlib.Path):
        self.path = path
        try:
            self._fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except (FileNotFoundError, NotADirectoryError):
            raise SnapshotError(f"{path} is not a directory") from None
        except OSError as e:
            raise SnapshotError(f"{path}: cannot open it ({e.strerror})") from None
        try:
            self._check(os.fstat(self._fd), str(path))
        except BaseException:
            os.close(self._fd)
            raise

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> "SnapshotDirectory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def exists(self, name: str) -> bool:
        try:
            os.stat(name, dir_fd=self._fd, follow_symlinks=False)
            return True
        except FileNotFoundError:
            return False

    def open(self, name: str):
        """`name` in the directory, opened for binary reading (checked as the class says)."""
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=self._fd)
        except FileNotFoundError:
            raise SnapshotError(f"{self.path} is incomplete: {name} is missing") from None
        except OSError as e:
            raise SnapshotError(f"{self.path}/{name}: cannot open it ({e.strerror}; a symbolic link is refused)") \
                from None
        f = os.fdopen(fd, "rb")
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise SnapshotError(f"{self.path}/{name} is not a regular file")
            self._check(info, f"{self.path}/{name}")
        except BaseException:
            f.close()
            raise
        return f

    def read(self, name: str) -> bytes:
        with self.open(name) as f:
            return f.read()

    @staticmethod
    def _check(info: os.stat_result, where: str) -> None:
        if info.st_uid not in (0, os.geteuid()):
            raise SnapshotError(f"{where} belongs to {user_name(info.st_uid)}, who could change it while it is "
                                f"imported: copy the snapshot into a directory of your own first (cp -r)")
        if info.st_mode & 0o022:
            raise SnapshotError(f"{where} can be written by group or others (mode {stat.S_IMODE(info.st_mode):04o}), "
                                f"who could change it while it is imported: `chmod -R go-w` it, or copy it into a "
                                f"directory of your own")


def create_private_file(path: pathlib.Path):
    """A new file opened for binary writing, mode 0600 (never an existing one)."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")


def sync_dir(path: pathlib.Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_manifest(directory: pathlib.Path, data: bytes) -> None:
    """Writes manifest.json (`data`: Manifest.to_json, encoded, as it was signed) durably (a temporary
    file, synced, renamed), after every other file."""
    temporary = directory / (MANIFEST + ".partial")
    with create_private_file(temporary) as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.rename(temporary, directory / MANIFEST)
    sync_dir(directory)


def read_manifest(directory: pathlib.Path) -> Manifest:
    """The manifest of a snapshot directory, checked (its signature is not); SnapshotError naming what is wrong."""
    with SnapshotDirectory(directory) as d:
        return parse_manifest(directory, manifest_bytes(d))


def manifest_bytes(directory: SnapshotDirectory) -> bytes:
    """The bytes of a snapshot's manifest; SnapshotError when it has none."""
    if not directory.exists(MANIFEST):
        raise SnapshotError(f"{directory.path} is not a dataClay snapshot: it has no {MANIFEST} (an export that did "
                            f"not finish, or another directory)")
    return directory.read(MANIFEST)


def parse_manifest(directory: pathlib.Path, raw: bytes) -> Manifest:
    """The manifest `raw` (manifest.json's bytes) of the snapshot in `directory`, checked."""
    path = directory / MANIFEST
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise SnapshotError(f"{path} is corrupted: not valid JSON ({e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        raise SnapshotError(f"{directory} is not a dataClay snapshot: its {MANIFEST} names format {found!r}, "
                            f"not {FORMAT!r}")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SnapshotError(f"{path} is corrupted: version {version!r} is not a format version")
    if version > VERSION:
        raise SnapshotError(f"{directory} was written in snapshot format version {version}, newer than the "
                            f"version {VERSION} this dataClay reads: import it with a newer dataClay")
    try:
        files = [DataFile(**_typed(f, {"name": str, "bytes": int, "sha256": str, "records": int},
                                   {"backend_id": (str, type(None))}))
                 for f in _field(data, "files", list)]
        manifest = Manifest(
            snapshot_id=_field(data, "snapshot_id", str), created_at=_field(data, "created_at", str),
            cut_at_ms=_field(data, "cut_at_ms", int), dataset=_field(data, "dataset", str),
            password_hashes=_field(data, "password_hashes", bool), source=_field(data, "source", dict),
            counts=_field(data, "counts", dict), files=files)
    except (TypeError, KeyError, ValueError) as e:
        raise SnapshotError(f"{path} is corrupted: {e}") from None
    names = [f.name for f in files]
    if len(set(names)) != len(names) or METADATA_FILE not in names:
        raise SnapshotError(f"{path} is corrupted: its file list repeats a file or lacks {METADATA_FILE}")
    for f in files:
        if not _FILE_NAME.match(f.name) or f.bytes < 0 or f.records < 0 or not re.fullmatch(r"[0-9a-f]{64}", f.sha256):
            raise SnapshotError(f"{path} is corrupted: its entry for {f.name!r} is malformed")
        if (f.backend_id is None) != (f.name == METADATA_FILE) or (
                f.backend_id is not None and f.name != f"objects-{f.backend_id}.dcs"):
            raise SnapshotError(f"{path} is corrupted: file {f.name!r} and backend {f.backend_id!r} do not match")
    return manifest


def verify_file(directory: SnapshotDirectory, entry: DataFile, progress=None) -> None:
    """Checks a data file's size and SHA-256 against the manifest; SnapshotError naming the file."""
    with directory.open(entry.name) as f:
        size = os.fstat(f.fileno()).st_size
        if size < entry.bytes:
            raise SnapshotError(f"{directory.path} is truncated: {entry.name} has {size} bytes, the manifest says "
                                f"{entry.bytes}")
        if size > entry.bytes:
            raise SnapshotError(f"{directory.path} is corrupted: {entry.name} has {size} bytes, more than the "
                                f"{entry.bytes} the manifest says")
        digest = hashlib.sha256()
        while True:
            block = f.read(_HASH_BLOCK)
            if not block:
                break
            digest.update(block)
            if progress is not None:
                progress.add(len(block))
    if digest.hexdigest() != entry.sha256:
        raise SnapshotError(f"{directory.path} is corrupted: {entry.name} does not match its SHA-256 checksum")


def delimited(buffer, name: str):
    """Yields (start, end) of each record in `buffer` (bytes, memoryview or mmap) of delimited records
    (rpc/framing.py): the record is buffer[start:end]; SnapshotError when a length is malformed or runs
    past the end."""
    try:
        yield from framing.delimited_spans(buffer)
    except framing.FramingError as e:
        raise SnapshotError(f"{name} is {'truncated' if e.truncated else 'corrupted'}: {e}") from None


def _field(data: dict, key: str, kind):
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"field {key!r} is not a {kind.__name__}")
    return value


def _typed(entry, required: dict, optional: dict) -> dict:
    if not isinstance(entry, dict) or set(entry) - set(required) - set(optional):
        raise TypeError("a file entry has unknown fields")
    out = {key: _field(entry, key, kind) for key, kind in required.items()}
    for key, kinds in optional.items():
        if key in entry:
            if not isinstance(entry[key], kinds):
                raise TypeError(f"field {key!r} has the wrong type")
            out[key] = entry[key]
    return out
