"""The one wrapper around the Logic Module's generated stub (mirrors Java's LogicModuleClient).
Calls carry the session token as metadata; failures raise dataclay.exceptions classes. What the
runtimes use comes back as plain records (dataclay._internal.records, converted in rpc/convert.py);
the administration and snapshot calls the CLI makes still return protocol messages."""
from __future__ import annotations

import operator

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.proto import common_pb2, logicmodule_pb2 as lm_pb2, logicmodule_pb2_grpc
from dataclay._internal.rpc import convert
from dataclay._internal.rpc.channels import LOGIC_MODULE
from dataclay._internal.rpc.stub_calls import build, check_timeout, client_stream, server_stream
from dataclay._internal.rpc.stub_client import StubClient
from dataclay._internal.records import AliasPage, DatasetPage, ObjectInfoRecord, ObjectPage, SessionRecord

_EMPTY = common_pb2.Empty()
_version = operator.attrgetter("version")


def _listed(field: str):
    """A response extractor: the repeated `field` as a list."""
    return lambda response: list(getattr(response, field))


class LogicModuleClient(StubClient):
    """A client of the Logic Module at `address` (see StubClient for the arguments)."""

    STUB = logicmodule_pb2_grpc.LogicModuleStub
    SERVER = LOGIC_MODULE

    def health(self, timeout: float = 5.0) -> str:
        """The Logic Module's version, if it answers within `timeout` seconds."""
        return self._call(self._stub.Health, _EMPTY, _version, check_timeout(timeout), metadata=())

    def new_session(self, user: str, password: str, dataset: str = "") -> SessionRecord:
        """Opens a session (the token is in the answer); `dataset` empty means the user's own."""
        request = build(lm_pb2.NewSessionRequest, "new_session", username=user, password=password,
                        dataset=dataset or "")
        return self._call(self._stub.NewSession, request, convert.session_record, metadata=())

    def close_session(self, timeout: float | None = None) -> None:
        """Closes the session this client acts in."""
        return self._call(self._stub.CloseSession, _EMPTY, timeout=check_timeout(timeout))

    def new_account(self, user: str, password: str, admin: bool = False) -> None:
        """Creates an account (administrators only)."""
        request = build(lm_pb2.NewAccountRequest, "new_account", username=user, password=password, admin=admin)
        return self._call(self._stub.NewAccount, request)

    def new_data_contract(self, dataset: str, beneficiary: str, read_only: bool = False,
                          begins_at_ms: int = 0, expires_at_ms: int = 0) -> None:
        """Grants `beneficiary` access to `dataset` (created for the caller if needed): read-write, or
        read-only; from `begins_at_ms` (0: now) until `expires_at_ms` (0: never), epoch milliseconds.
        Granting again replaces the earlier terms."""
        request = build(lm_pb2.NewDataContractRequest, "new_data_contract", dataset=dataset,
                        beneficiary=beneficiary, read_only=read_only, begins_at_ms=begins_at_ms,
                        expires_at_ms=expires_at_ms)
        return self._call(self._stub.NewDataContract, request)

    def revoke_data_contract(self, dataset: str, beneficiary: str) -> None:
        """Takes back `beneficiary`'s contract on a dataset the caller owns."""
        request = build(lm_pb2.RevokeDataContractRequest, "revoke_data_contract", dataset=dataset,
                        beneficiary=beneficiary)
        return self._call(self._stub.RevokeDataContract, request)

    def list_data_contracts(self) -> list:
        """The contracts (DataContract) on the caller's datasets, then those granted to it."""
        return self._call(self._stub.ListDataContracts, _EMPTY, _listed("contracts"))

    def list_datasets(self, page_size: int = 0, page_token: str = "", count_objects: bool = False,
                      timeout: float | None = None) -> DatasetPage:
        """A page of the datasets the session may see (administrators: all), by name; `page_size` 0: 100, at
        most 1000; `page_token`: the last page's next_page_token ("" to start)."""
        request = build(lm_pb2.ListDatasetsRequest, "list_datasets", page_size=page_size, page_token=page_token,
                        count_objects=count_objects)
        return self._call(self._stub.ListDatasets, request, convert.dataset_page, check_timeout(timeout))

    def list_aliases(self, pattern: str = "", dataset: str = "", page_size: int = 0, page_token: str = "",
                     timeout: float | None = None) -> AliasPage:
        """A page of the aliases matching `pattern` ('*' any run of characters, '?' one, all else literal; "":
        all) in `dataset` ("": every dataset the session may see), by dataset then alias."""
        request = build(lm_pb2.ListAliasesRequest, "list_aliases", pattern=pattern, dataset=dataset,
                        page_size=page_size, page_token=page_token)
        return self._call(self._stub.ListAliases, request, convert.alias_page, check_timeout(timeout))

    def list_objects(self, class_name: str = "", dataset: str = "", page_size: int = 0, page_token: str = "",
                     timeout: float | None = None, version_of: str = "") -> ObjectPage:
        """A page of the objects (ObjectInfoRecords, with aliases and replicas) of `class_name` ("": every class) in
        `dataset` ("": every dataset the session may see), by dataset, class and ID; with `version_of`, only
        the versions of that object (which the session must be able to read)."""
        request = build(lm_pb2.ListObjectsRequest, "list_objects", class_name=class_name, dataset=dataset,
                        page_size=page_size, page_token=page_token, version_of=version_of)
        return self._call(self._stub.ListObjects, request, convert.object_page, check_timeout(timeout))

    def set_model_registration(self, user: str, allowed: bool) -> None:
        """Lets an account register models, or stops it (administrators only)."""
        request = build(lm_pb2.SetModelRegistrationRequest, "set_model_registration", username=user,
                        allowed=allowed)
        return self._call(self._stub.SetModelRegistration, request)

    def register_model(self, model: lm_pb2.Model) -> None:
        """Registers (or updates) a model; the Logic Module deploys it to every live backend."""
        return self._call(self._stub.RegisterModel, _message(model, lm_pb2.Model, "model"))

    def get_model(self, namespace: str) -> lm_pb2.Model:
        """The registered model of a namespace, if the caller may read it (else as if there were none)."""
        return self._call(self._stub.GetModel, build(lm_pb2.GetModelRequest, "get_model", namespace=namespace))

    def list_models(self, language: str = "") -> list:
        """The registered models (Model messages) of a language ("python", "java"; "": all) the caller may
        read: its own, the published ones (administrators: all)."""
        try:
            value = convert.language_value(language)
        except ValueError as e:
            raise InvalidArgumentError(f"list_models: {e}") from None
        request = build(lm_pb2.ListModelsRequest, "list_models", language=value)
        return self._call(self._stub.ListModels, request, _listed("models"))

    def set_model_published(self, namespace: str, published: bool) -> None:
        """Lets every account use a model, or only its owner and administrators again (its owner or an
        administrator)."""
        request = build(lm_pb2.SetModelPublishedRequest, "set_model_published", namespace=namespace,
                        published=published)
        return self._call(self._stub.SetModelPublished, request)

    def remove_model(self, namespace: str, force: bool = False) -> int:
        """Removes a model and its code from every backend (its owner or an administrator); refused while
        objects of its classes exist unless `force`. Returns the objects of its classes left behind."""
        request = build(lm_pb2.RemoveModelRequest, "remove_model", namespace=namespace, force=force)
        return self._call(self._stub.RemoveModel, request, operator.attrgetter("objects_left"))

    def get_backends(self, timeout: float | None = None) -> list:
        """Every registered backend (BackendInfo) with its liveness."""
        return self._call(self._stub.GetBackends, _EMPTY, _listed("backends"), check_timeout(timeout))

    def get_object_info(self, object_id: str, timeout: float | None = None) -> ObjectInfoRecord:
        """Class, dataset, master and replica locations and aliases of an object."""
        request = build(lm_pb2.ObjectIdRequest, "get_object_info", id=object_id)
        return self._call(self._stub.GetObjectInfo, request, convert.object_info_record, check_timeout(timeout))

    def get_object_by_alias(self, alias: str, dataset: str = "") -> ObjectInfoRecord:
        """The object with an alias; `dataset` empty means the session's dataset."""
        request = build(lm_pb2.AliasRequest, "get_object_by_alias", alias=alias, dataset=dataset or "")
        return self._call(self._stub.GetObjectByAlias, request, convert.object_info_record)

    def new_alias(self, alias: str, object_id: str) -> None:
        """Gives an existing object an alias in its dataset."""
        request = build(lm_pb2.NewAliasRequest, "new_alias", alias=alias, object_id=object_id)
        return self._call(self._stub.NewAlias, request)

    def delete_alias(self, alias: str, dataset: str = "") -> None:
        """Removes an alias; `dataset` empty means the session's dataset."""
        request = build(lm_pb2.AliasRequest, "delete_alias", alias=alias, dataset=dataset or "")
        return self._call(self._stub.DeleteAlias, request)

    def get_stats(self) -> lm_pb2.LogicModuleStats:
        """Per-RPC call counters and object, alias and session totals."""
        return self._call(self._stub.GetStats, _EMPTY)

    def collect_garbage(self, timeout: float | None = None) -> lm_pb2.GarbageReport:
        """Runs a garbage collection now (administrators); BackendUnavailableError when it was abandoned."""
        return self._call(self._stub.CollectGarbage, _EMPTY, timeout=check_timeout(timeout))

    # ---- snapshots and imports (docs/internals.md "Snapshots") ----

    def begin_snapshot(self, dataset: str = "", password_hashes: bool = False,
                       timeout: float | None = None) -> lm_pb2.SnapshotInfo:
        """Fixes a consistent cut of the cluster for an export (administrators)."""
        request = build(lm_pb2.BeginSnapshotRequest, "begin_snapshot", dataset=dataset or "",
                        password_hashes=password_hashes)
        return self._call(self._stub.BeginSnapshot, request, timeout=check_timeout(timeout))

    def export_metadata(self, snapshot_id: str):
        """Yields the SnapshotChunks of the metadata as of the cut (delimited MetadataRecords)."""
        request = build(lm_pb2.SnapshotRequest, "export_metadata", snapshot_id=snapshot_id)
        return server_stream(self._stub.ExportMetadata, request, self._metadata, None, self._target)

    def end_snapshot(self, snapshot_id: str) -> None:
        """Ends a snapshot: the backends stop keeping copies for it."""
        request = build(lm_pb2.SnapshotRequest, "end_snapshot", snapshot_id=snapshot_id)
        return self._call(self._stub.EndSnapshot, request)

    def begin_import(self, parts) -> lm_pb2.ImportOpened:
        """Sends an import's plan, models, object IDs and aliases (ImportPlanParts); opens the import."""
        return client_stream(self._stub.BeginImport, parts, self._metadata, None, self._target)

    def commit_import(self, import_id: str) -> lm_pb2.ImportReport:
        """Registers everything staged for the import in one transaction, or nothing."""
        request = build(lm_pb2.ImportRequest, "commit_import", import_id=import_id)
        return self._call(self._stub.CommitImport, request)

    def abort_import(self, import_id: str) -> None:
        """Gives an import up; the backends remove what they staged."""
        request = build(lm_pb2.ImportRequest, "abort_import", import_id=import_id)
        return self._call(self._stub.AbortImport, request)

    def get_import_state(self, import_id: str, timeout: float | None = 10.0) -> int:
        """IMPORT_OPEN, IMPORT_COMMITTED or IMPORT_UNKNOWN; an administrator asking keeps the import open."""
        request = build(lm_pb2.ImportRequest, "get_import_state", import_id=import_id)
        return self._call(self._stub.GetImportState, request, operator.attrgetter("state"), check_timeout(timeout))


def _message(value, message_type, what: str):
    if not isinstance(value, message_type):
        raise InvalidArgumentError(f"{what} must be a {message_type.DESCRIPTOR.full_name}, "
                                   f"not {type(value).__name__}")
    return value
