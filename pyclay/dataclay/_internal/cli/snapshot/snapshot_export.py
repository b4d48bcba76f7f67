"""`dataclay export DIR`: a consistent snapshot of a running cluster written to a directory
(docs/internals.md "Snapshots"). The Logic Module fixes a cut of every backend and of the metadata;
this process then streams the metadata and each backend's objects, in parallel, into data files,
and writes the manifest last. A failed export leaves nothing behind but the directory it was given."""
from __future__ import annotations

import concurrent.futures
import datetime
import hashlib
import os
import pathlib
import shutil
import threading

from dataclay.exceptions import DataClayException, InternalError
from dataclay._internal.cli.snapshot import snapshot_format as fmt
from dataclay._internal.cli.snapshot import snapshot_signing as signing
from dataclay._internal.cli.snapshot.admin_session import admin_session
from dataclay._internal.cli.common.progress import Progress
from dataclay._internal.config import Config
from dataclay._internal.proto import snapshot_pb2
from dataclay._internal.rpc import DataServiceClient


def export_snapshot(config: Config, directory: str, dataset: str = "", password_hashes: bool = False,
                    progress: bool | None = None, signing_key: str | None = None) -> list[str]:
    """Writes a snapshot of the cluster `config` names into `directory` (new, or an empty one of the
    caller's), signed with `signing_key` (default: DATACLAY_HOME's, made on first need); the lines to print."""
    key_path = pathlib.Path(signing_key).expanduser().absolute() if signing_key else signing.default_key(config.home)
    key = signing.signing_key(key_path)
    target, created = fmt.make_private_dir(pathlib.Path(directory))
    try:
        return _export(config, target, dataset, password_hashes, progress, key) + [
            f"signed with key {signing.fingerprint(key.public_key())} ({key_path}); an import elsewhere needs "
            f"--trust with its public half, {signing.public_key_file(key_path)}"]
    except BaseException:
        _remove_partial(target, created)
        raise


def _export(config: Config, target: pathlib.Path, dataset: str, hashes: bool, progress, key) -> list[str]:
    with admin_session(config, "export") as lm:
        encrypted = _encrypted_backends(config, lm)
        info = lm.begin_snapshot(dataset, hashes)
        try:
            files = _stream_all(config, lm, info, target, progress)
        finally:
            try:
                lm.end_snapshot(info.snapshot_id)
            except DataClayException:
                pass  # every backend drops its cut when its stream ends anyway
    counts = _counts(target / fmt.METADATA_FILE)
    counts["objects"] = sum(f.records for f in files if f.backend_id is not None)
    counts["bytes"] = sum(f.bytes for f in files)
    backends = [{"id": b.backend.id, "name": b.backend.name, "host": b.backend.host, "engine": b.backend.store_engine,
                 "encrypted": b.backend.id in encrypted} for b in info.backends]
    manifest = fmt.Manifest(
        snapshot_id=info.snapshot_id, created_at=datetime.datetime.now(datetime.timezone.utc).isoformat(),
        cut_at_ms=info.cut_at_ms, dataset=dataset, password_hashes=hashes,
        source={"logic_module": config.lm_address, "version": info.version, "barrier_ms": info.barrier_ms,
                "backends": backends},
        counts=counts, files=files)
    data = manifest.to_json().encode()
    signing.sign(target, data, key)
    fmt.write_manifest(target, data)
    lines = [f"exported {counts['objects']:,} objects, {counts['aliases']:,} aliases and {counts['models']} models "
             f"({counts['bytes'] / 1e6:,.1f} MB) to {target}",
             f"cut at {datetime.datetime.fromtimestamp(info.cut_at_ms / 1000, datetime.timezone.utc).isoformat()} "
             f"across {len(info.backends)} backend(s); writes waited at most {info.barrier_ms} ms for it"]
    if encrypted:
        lines.append(f"backend(s) {', '.join(sorted(encrypted))} encrypt at rest, but a snapshot holds values in "
                     f"clear: keep it as safe as the data (it is readable by you only)")
    if hashes:
        lines.append("the snapshot holds the accounts' password hashes: keep it as safe as the passwords")
    return lines


def _stream_all(config: Config, lm, info, target: pathlib.Path, progress):
    about = sum(b.bytes for b in info.backends) or None
    meter = Progress("export", total_bytes=about, enabled=progress, about=True)
    jobs = {fmt.METADATA_FILE: (None, lambda: lm.export_metadata(info.snapshot_id))}
    clients = []
    for b in info.backends:
        client = DataServiceClient(f"{b.backend.host}:{b.backend.port}", lm.token, tls=config.tls)
        clients.append(client)
        jobs[f"objects-{b.backend.id}.dcs"] = (b.backend.id, lambda c=client: c.export_objects(info.snapshot_id))
    failed = threading.Event()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(jobs)) as pool:
            futures = [pool.submit(_write_stream, target / name, backend, start, meter, failed)
                       for name, (backend, start) in jobs.items()]
            # the first failure stops the other streams: the export is given up anyway
            done, _ = concurrent.futures.wait(futures, return_when=concurrent.futures.FIRST_EXCEPTION)
            if any(f.exception() for f in done):
                failed.set()
            errors = [f.exception() for f in futures if f.exception() and not isinstance(f.exception(), _Stopped)]
            if errors:
                raise errors[0]
            files = [f.result() for f in futures]
    finally:
        for client in clients:
            client.close()
    meter.done()
    return files


class _Stopped(Exception):
    """A stream stopped because another one failed."""


def _write_stream(path: pathlib.Path, backend_id, start, meter: Progress, failed: threading.Event) -> fmt.DataFile:
    """Writes the data of a stream of SnapshotChunks to a new file; checks the totals of its last chunk."""
    digest = hashlib.sha256()
    written = 0
    last = None
    chunks = start()
    with fmt.create_private_file(path) as out:
        for chunk in chunks:
            if failed.is_set():
                chunks.close()  # cancels the call
                raise _Stopped()
            if chunk.last:
                last = chunk
                break
            out.write(chunk.data)
            digest.update(chunk.data)
            written += len(chunk.data)
            meter.add(len(chunk.data))
        out.flush()
        os.fsync(out.fileno())
    if last is None or last.bytes != written:
        raise InternalError(f"the stream for {path.name} ended early ({written} bytes received"
                            f"{'' if last is None else f', {last.bytes} sent'})")
    return fmt.DataFile(name=path.name, bytes=written, sha256=digest.hexdigest(), records=last.records,
                        backend_id=backend_id)


def _counts(metadata: pathlib.Path) -> dict:
    counts = {"models": 0, "accounts": 0, "datasets": 0, "contracts": 0, "registered": 0, "replicas": 0, "aliases": 0}
    data = metadata.read_bytes()
    for start, end in fmt.delimited(data, metadata.name):
        record = snapshot_pb2.MetadataRecord.FromString(data[start:end])
        kind = record.WhichOneof("record")
        if kind == "objects":
            counts["registered"] += len(record.objects.objects)
            counts["replicas"] += sum(len(o.replica_backend_ids) for o in record.objects.objects)
        elif kind == "aliases":
            counts["aliases"] += len(record.aliases.aliases)
        elif kind in ("model", "account", "dataset", "contract"):
            counts[kind + "s"] += 1
    return counts


def _encrypted_backends(config: Config, lm) -> set:
    """The live backends whose store encrypts at rest (asked before the cut, to keep the cut short)."""
    encrypted = set()
    for b in lm.get_backends():
        if not b.alive:
            continue
        client = DataServiceClient(f"{b.host}:{b.port}", lm.token, tls=config.tls)
        try:
            if client.get_status().store.encrypted:
                encrypted.add(b.id)
        except DataClayException:
            pass  # a backend that does not answer now fails the export soon enough
        finally:
            client.close()
    return encrypted


def _remove_partial(target: pathlib.Path, created: bool) -> None:
    if created:
        shutil.rmtree(target, ignore_errors=True)
        return
    for child in target.iterdir() if target.is_dir() else ():
        if child.is_dir():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)
