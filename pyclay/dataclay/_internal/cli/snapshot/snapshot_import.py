"""`dataclay import DIR`: loads a snapshot into the cluster the client configuration names, all or
nothing (docs/internals.md "Snapshots"). The snapshot is checked completely first, its signature
by a trusted key before anything else; the Logic Module then checks the plan against the cluster
and against what the administrator allowed (nothing changes yet), and says what the import will
do, which is printed; the backends stage the objects (stored, unregistered); and the Logic Module
registers everything in one transaction. Any failure before that transaction commits makes the
backends remove what they staged."""
from __future__ import annotations

import concurrent.futures
import mmap
import os
import pathlib
import secrets
import threading

from dataclay.exceptions import BackendUnavailableError, DataClayException, InternalError, InvalidArgumentError
from dataclay._internal.cli.snapshot import import_review, snapshot_format as fmt, snapshot_signing as signing
from dataclay._internal.cli.snapshot.admin_session import admin_session
from dataclay._internal.cli.snapshot.import_placement import place
from dataclay._internal.cli.common.progress import Progress
from dataclay._internal.cli.snapshot.snapshot_reader import read_snapshot
from dataclay._internal.config import Config
from dataclay._internal.proto import common_pb2, dataservice_pb2, logicmodule_pb2 as lm_pb2
from dataclay._internal.rpc import DataServiceClient, framing

_PIECE = 1 << 20
_BATCH = 10_000
_KEEP_ALIVE_SECONDS = 20


def import_snapshot(config: Config, directory: str, passwords_file: str | None = None,
                    progress: bool | None = None, allow: list = (), trust: list = (),
                    signing_key: str | None = None, dry_run: bool = False, say=print) -> list[str]:
    """Imports the snapshot in `directory` if a trusted key signed it (`signing_key`'s, default
    DATACLAY_HOME's, or one of the public key files `trust`) and it needs no more than `allow`
    (--allow lists); `say`s what it will do before it does it (a dry run stops there); the lines to
    print at the end. Nothing of it stays when it fails."""
    allowed = import_review.parse_allow(list(allow))
    passwords = _passwords_path(passwords_file)
    own = pathlib.Path(signing_key).expanduser().absolute() if signing_key else signing.default_key(config.home)
    index = read_snapshot(directory, signing.trusted_keys(own, list(trust)), progress)
    try:
        return _import(config, index, allowed, passwords, progress, dry_run, say)
    finally:
        index.close()


def _import(config, index, allowed, passwords, progress, dry_run, say) -> list[str]:
    hashes = "password-hashes" in allowed
    with admin_session(config, "import") as lm:
        live = [b for b in lm.get_backends() if b.alive]
        if not live:
            raise BackendUnavailableError("no live backend to import into")
        placement = place(index, {b.id: set(b.languages) for b in live})
        new_passwords = {a.username: secrets.token_urlsafe(18) for a in index.accounts
                         if not (hashes and a.password_hash)} if passwords else {}
        source = f"snapshot {index.manifest.snapshot_id} of {index.manifest.source.get('logic_module', '?')}"
        opened = lm.begin_import(_plan_parts(index, placement, new_passwords, source, hashes, allowed, dry_run))
        if dry_run:
            for line in import_review.describe(index, opened, placement, len(live), hashes, new_passwords,
                                               passwords, allowed):
                say(line)
            return ["dry run: nothing was imported"]
        written = None
        try:
            for line in import_review.describe(index, opened, placement, len(live), hashes, new_passwords,
                                               passwords, allowed):
                say(line)  # before anything is staged
            created = [u for u in opened.accounts_to_create if u in new_passwords]
            if created:
                written = _write_passwords(passwords, {u: new_passwords[u] for u in created})
            _stage(config, lm, opened.import_id, index, placement, live, progress)
            report = _commit(lm, opened.import_id)
        except BaseException as failure:
            try:
                lm.abort_import(opened.import_id)
            except DataClayException:
                pass  # it failed while committing (the Logic Module gave it up) or is gone with it
            if written is not None:
                written.unlink(missing_ok=True)
            if isinstance(failure, DataClayException):
                raise type(failure)(f"{failure} (the import was given up: nothing of it stays in the cluster)") \
                    from None
            raise
    return _summary(index, placement, report, len(live), written)


def _plan_parts(index, placement, new_passwords: dict, source: str, hashes: bool, allowed: frozenset,
                dry_run: bool):
    """The ImportPlanParts: the plan (password hashes only when allowed), models, IDs, aliases."""
    accounts = [lm_pb2.SnapshotAccount(username=a.username, admin=a.admin, may_register_models=a.may_register_models,
                                       password_hash=a.password_hash if hashes else "",
                                       password_salt=a.password_salt if hashes else "",
                                       password_iterations=a.password_iterations if hashes else 0,
                                       new_password=new_passwords.get(a.username, ""))
                for a in index.accounts]
    objects = import_review.objects_per_dataset(index)
    datasets = [lm_pb2.SnapshotDataset(name=d.name, owner=d.owner, objects=objects[d.name]) for d in index.datasets]
    targets = [lm_pb2.ImportTarget(backend_id=t.backend_id, objects=len(t.masters), replicas=len(t.replicas))
               for t in placement.staging()]
    yield lm_pb2.ImportPlanPart(plan=lm_pb2.ImportPlan(source=source, datasets=datasets, accounts=accounts,
                                                       contracts=index.contracts, targets=targets,
                                                       allowed=import_review.allowed_message(allowed),
                                                       dry_run=dry_run))
    for model in index.models:
        yield lm_pb2.ImportPlanPart(model=model)
    ids = list(index.chosen)
    for at in range(0, len(ids), _BATCH):
        yield lm_pb2.ImportPlanPart(ids=lm_pb2.ImportIds(ids=ids[at:at + _BATCH]))
    for at in range(0, len(index.aliases), _BATCH):
        yield lm_pb2.ImportPlanPart(aliases=lm_pb2.SnapshotAliases(aliases=index.aliases[at:at + _BATCH]))


def _stage(config, lm, import_id: str, index, placement, live, progress) -> None:
    """Sends every target its objects, in parallel, while telling the Logic Module the import is alive."""
    address = {b.id: f"{b.host}:{b.port}" for b in live}
    total = sum(t.bytes for t in placement.staging())
    meter = Progress("import", total_bytes=total or None, total_objects=len(index.chosen), enabled=progress)
    stop = threading.Event()
    keeper = threading.Thread(target=_keep_alive, args=(lm, import_id, stop), daemon=True)
    keeper.start()
    failed = threading.Event()
    try:
        targets = placement.staging()
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(targets))) as pool:
            futures = {pool.submit(_stage_on, config, address[t.backend_id], lm.token, import_id, index, t, meter,
                                   failed): t for t in targets}
            # the first failure stops the other streams: the import is given up anyway
            done, _ = concurrent.futures.wait(futures, return_when=concurrent.futures.FIRST_EXCEPTION)
            if any(f.exception() for f in done):
                failed.set()
            for future, target in futures.items():
                receipt = future.result()
                if receipt.objects != len(target.masters) or receipt.replicas != len(target.replicas):
                    raise InternalError(f"backend {target.backend_id} staged {receipt.objects} objects and "
                                        f"{receipt.replicas} replicas of the {len(target.masters)} and "
                                        f"{len(target.replicas)} sent")
    except _Stopped:
        raise next(f.exception() for f in futures if f.exception() and not isinstance(f.exception(), _Stopped))
    finally:
        stop.set()
        keeper.join(timeout=5)
    meter.done()


class _Stopped(Exception):
    """A staging stream stopped because another one failed."""


def _stage_on(config, address: str, token: str, import_id: str, index, target, meter, failed):
    client = DataServiceClient(address, token, tls=config.tls)
    try:
        return client.import_objects(_chunks(import_id, index, target, meter, failed))
    except DataClayException as e:
        raise type(e)(f"staging on backend {target.backend_id} at {address} failed: {e}") from None
    finally:
        client.close()


def _copied(raw, replicas) -> list:
    """A delimited CopiedObject record around an ObjectData record (`raw`, bytes or a memoryview), as
    parts to join: built without decoding or copying `raw`."""
    tail = b"".join(framing.field_head(2, len(b)) + b for b in (r.encode() for r in replicas))  # replica_backend_ids
    head = framing.field_head(1, len(raw))  # object
    return [framing.encode_varint(len(head) + len(raw) + len(tail)) + head, raw, tail]


def _chunks(import_id: str, index, target, meter, failed):
    """ImportChunks of the target's records (delimited CopiedObjects): master copies as they are in the
    snapshot, naming the backends of their replicas, and replicas naming their master. Records are
    referenced in the mapped files and copied once, into each piece."""
    views = {}
    pending, size, first = [], 0, True

    def pieces():
        nonlocal size, first
        data = b"".join(pending)
        pending.clear()
        size = 0
        for at in range(0, max(len(data), 1), _PIECE):
            yield dataservice_pb2.ImportChunk(import_id=import_id if first else "",
                                              data=data if len(data) <= _PIECE else data[at:at + _PIECE])
            first = False

    try:
        items = [(r, None) for r in target.masters] + list(target.replicas)
        for record, master in items:
            if failed.is_set():
                raise _Stopped()
            raw = _view(index, views, record)[index.start[record]:index.end[record]]
            meter.add(len(raw), 1 if master is None else 0)
            if master is None:
                parts = _copied(raw, target.replica_holders.get(record, ()))
            else:
                copy = common_pb2.ObjectData.FromString(raw)
                copy.header.master_backend_id = master
                parts = _copied(copy.SerializeToString(), ())
            pending.extend(parts)
            size += sum(len(x) for x in parts)
            if size >= _PIECE:
                yield from pieces()
        if pending or first:
            yield from pieces()
    finally:
        pending.clear()
        for f, view in views.values():
            try:
                view.release()
            except BufferError:
                pass  # a piece still refers to the mapping: closing the file is enough
            f.close()


def _view(index, views: dict, record: int) -> memoryview:
    number = index.file_of[record]
    if number not in views:
        f = index.folder.open(index.files[number][0])
        views[number] = (f, memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)))
    return views[number][1]


def _keep_alive(lm, import_id: str, stop: threading.Event) -> None:
    """Asks the Logic Module about the import now and then: an administrator asking keeps it open."""
    while not stop.wait(_KEEP_ALIVE_SECONDS):
        try:
            lm.get_import_state(import_id)
        except DataClayException:
            pass  # the staging streams fail by themselves if the cluster is gone


def _commit(lm, import_id: str):
    try:
        return lm.commit_import(import_id)
    except BackendUnavailableError:
        # the answer was lost: the import may have committed all the same
        if lm.get_import_state(import_id) == lm_pb2.IMPORT_COMMITTED:
            return None
        raise


def _passwords_path(passwords_file: str | None):
    if passwords_file is None:
        return None
    path = pathlib.Path(passwords_file).expanduser().resolve()
    if path.exists():
        raise InvalidArgumentError(f"--passwords-file {path} exists: name a new file (it will hold passwords)")
    if not path.parent.is_dir():
        raise InvalidArgumentError(f"--passwords-file: directory {path.parent} does not exist")
    return path


def _write_passwords(path: pathlib.Path, passwords: dict) -> pathlib.Path:
    with fmt.create_private_file(path) as out:
        for user, password in sorted(passwords.items()):
            out.write(f"{user} {password}\n".encode())
        out.flush()
        os.fsync(out.fileno())
    return path


def _summary(index, placement, report, backends: int, passwords) -> list[str]:
    total = sum(index.record_bytes(r) for r in index.chosen.values())
    if report is None:
        lines = [f"imported {len(index.chosen):,} objects ({total / 1e6:,.1f} MB) into {backends} backend(s) (the "
                 f"commit's answer was lost; the Logic Module says it committed)"]
    else:
        lines = [f"imported {report.objects:,} objects ({total / 1e6:,.1f} MB) into {backends} backend(s), "
                 f"{report.replicas:,} replicas, {report.aliases:,} aliases"]
        if report.models_registered:
            lines.append(f"registered models: {', '.join(report.models_registered)}")
        if report.accounts_created:
            lines.append(f"created accounts: {', '.join(report.accounts_created)}"
                         + (f" (their new passwords are in {passwords})" if passwords else ""))
    if placement.short_of_replicas:
        lines.append(f"{placement.short_of_replicas:,} objects had up to {placement.wanted_replicas} replicas; this "
                     f"cluster has {backends} backend(s), so they got {backends - 1}")
    lines.extend(f"note: {w}" for w in index.warnings)
    return lines
